#include <gtest/gtest.h>

#include "chat/thinking_parser.h"
#include "chat/tool_parser.h"

namespace paddock::chat {
namespace {

ThinkingParser::Output think_all(std::string_view text, const std::vector<size_t>& cuts,
                                 bool primed = false) {
  ThinkingParser p;
  if (primed) p.start_in_thinking();
  ThinkingParser::Output all;
  size_t prev = 0;
  auto feed = [&](ThinkingParser::Output o) {
    all.thinking += o.thinking;
    all.content += o.content;
  };
  for (size_t c : cuts) {
    feed(p.add(text.substr(prev, c - prev)));
    prev = c;
  }
  feed(p.add(text.substr(prev)));
  feed(p.finish());
  return all;
}

TEST(ThinkingParser, OllamaVectorsAtEveryByteBoundary) {
  struct Case {
    const char* in;
    const char* thinking;
    const char* content;
  };
  const Case cases[] = {
      {"<think> internal </think> world", "internal ", "world"},
      {"<think>a</think><think>b</think>c", "a", "<think>b</think>c"},
      {"  \n<think>x</think>\n\nanswer", "x", "answer"},
      {"no thinking here", "", "no thinking here"},
      {"<thi", "", "<thi"},
      {"<think>unfinished </thi", "unfinished </thi", ""},
  };
  for (const Case& c : cases) {
    const std::string_view in = c.in;
    for (size_t cut = 0; cut <= in.size(); ++cut) {
      ThinkingParser::Output o = think_all(in, {cut});
      EXPECT_EQ(o.thinking, c.thinking) << c.in << " cut " << cut;
      EXPECT_EQ(o.content, c.content) << c.in << " cut " << cut;
    }
    // One byte at a time: no closing-tag byte ever leaks into thinking.
    std::vector<size_t> cuts;
    for (size_t i = 1; i < in.size(); ++i) cuts.push_back(i);
    ThinkingParser::Output o = think_all(in, cuts);
    EXPECT_EQ(o.thinking, c.thinking) << c.in;
    EXPECT_EQ(o.content, c.content) << c.in;
  }
}

TEST(ThinkingParser, PromptEndingWithOpeningTag) {
  ThinkingParser::Output o = think_all("plan</think>done", {3}, /*primed=*/true);
  EXPECT_EQ(o.thinking, "plan");
  EXPECT_EQ(o.content, "done");
}

TEST(ThinkingParser, InfersTagsFromTemplate) {
  Result<GoTemplate> t = GoTemplate::parse(
      "{{ range .Messages }}{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}{{ end "
      "}}");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(ThinkingParser::infer_tags(*t), (std::pair<std::string, std::string>("<think>", "</think>")));
}

struct Streamed {
  std::string content;
  std::vector<ToolCall> calls;
};

Streamed tools_all(const std::string& tag, std::string_view text, size_t cut, bool bytewise,
                   std::vector<std::string> names = {"get_weather", "get_time"}) {
  int n = 0;
  ToolCallParser p(tag, std::move(names), [&n] { return "call_" + std::to_string(n++); });
  Streamed s;
  auto feed = [&](ToolCallParser::Output o) {
    s.content += o.content;
    for (ToolCall& c : o.calls) s.calls.push_back(std::move(c));
  };
  if (bytewise) {
    for (char ch : text) feed(p.add(std::string_view(&ch, 1)));
  } else {
    feed(p.add(text.substr(0, cut)));
    feed(p.add(text.substr(cut)));
  }
  feed(p.finish());
  return s;
}

TEST(ToolCallParser, FamiliesAtEveryByteBoundary) {
  struct Case {
    std::string tag;
    std::string in;
    std::string content;
    std::vector<std::string> names;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"{",
       R"({"name": "get_weather", "parameters": {"city": "Paris"}})",
       "",
       {"get_weather"},
       {R"({"city":"Paris"})"}},
      {"<tool_call>",
       "Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Oslo\"}}\n</tool_call>\n"
       "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
       "Let me check.",
       {"get_weather", "get_time"},
       {R"({"city":"Oslo"})", "{}"}},
      {"[TOOL_CALLS] [",
       R"([TOOL_CALLS] [{"name": "get_time", "arguments": "{\"tz\": \"UTC\"}"}])",
       "",
       {"get_time"},
       {R"({"tz":"UTC"})"}},
      {"[",
       R"([{"name": "get_weather", "arguments": {"a": "}"}}, {"get_time": {"b": 1}}])",
       "",
       {"get_weather", "get_time"},
       {R"({"a":"}"})", R"({"b":1})"}},
      {"{", "Plain answer with {braces}.", "Plain answer with {braces}.", {}, {}},
      {"<tool_call>", "Text mentioning <tool but not a call", "Text mentioning <tool but not a call", {}, {}},
      {"{", R"({"not": "a call"})", R"({"not": "a call"})", {}, {}},
  };
  for (const Case& c : cases) {
    for (size_t cut = 0; cut <= c.in.size(); ++cut) {
      for (bool bytewise : {false, true}) {
        if (bytewise && cut > 0) continue;
        Streamed s = tools_all(c.tag, c.in, cut, bytewise);
        EXPECT_EQ(s.content, c.content) << c.in << " cut " << cut;
        if (!c.names.empty()) {
          EXPECT_EQ(s.content.find(c.tag), std::string::npos) << "tag leaked: " << c.in;
        }
        ASSERT_EQ(s.calls.size(), c.names.size()) << c.in << " cut " << cut;
        for (size_t i = 0; i < s.calls.size(); ++i) {
          EXPECT_EQ(s.calls[i].name, c.names[i]);
          EXPECT_EQ(s.calls[i].arguments.dump(), c.args[i]);
          EXPECT_EQ(s.calls[i].index, static_cast<int>(i));
          EXPECT_EQ(s.calls[i].id, "call_" + std::to_string(i));
        }
      }
    }
  }
}

TEST(ToolCallParser, InfersTagsFromTemplates) {
  auto tag = [](const char* text) {
    Result<GoTemplate> t = GoTemplate::parse(text);
    return t.ok() ? ToolCallParser::infer_tag(*t) : "PARSE ERROR";
  };
  EXPECT_EQ(tag("{{ range .Messages }}{{ if .ToolCalls }}<tool_call>\n{{ range .ToolCalls }}{\"name\": "
                "\"{{ .Function.Name }}\"}{{ end }}{{ end }}{{ end }}"),
            "<tool_call>");
  EXPECT_EQ(tag("{{ range .Messages }}{{ if .ToolCalls }}[TOOL_CALLS] [{{ range .ToolCalls }}{\"name\": 1}{{ "
                "end }}]"
                "{{ end }}{{ end }}"),
            "[TOOL_CALLS] [");
  EXPECT_EQ(tag("{{ range .Messages }}{{ if .ToolCalls }}\n{{ range .ToolCalls }}\n{\"name\": 1}{{ end }}{{ "
                "end }}{{ end }}"),
            "{");
  EXPECT_EQ(tag("{{ .Prompt }}"), "{");
}

TEST(ToolCallParser, RandomIdsLookLikeOllamas) {
  ToolCallParser p("{", {});
  ToolCallParser::Output o = p.add(R"({"name": "f", "arguments": {}})");
  ASSERT_EQ(o.calls.size(), 1u);
  ASSERT_EQ(o.calls[0].id.size(), 13u);
  EXPECT_EQ(o.calls[0].id.substr(0, 5), "call_");
  for (char c : o.calls[0].id.substr(5)) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

}  // namespace
}  // namespace paddock::chat
