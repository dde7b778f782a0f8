// tool_choice "required"/named as a grammar: what it accepts and rejects for bare-JSON and
// tagged templates (and after an open thinking block), and that every accepted text, streamed
// a byte at a time through the thinking and tool-call parsers, is exactly one call.
#include "server/tool_choice.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "chat/thinking_parser.h"
#include "chat/tool_parser.h"
#include "sample/gbnf.h"
#include "sample/grammar_matcher.h"

namespace paddock::server {
namespace {

constexpr const char* kBare =
    "{{ if .Tools }}{{ json .Tools }}{{ end }}{{ range .Messages }}{{ .Content }}"
    "{{ if .ToolCalls }}{{ range .ToolCalls }}{{ json .Function }}{{ end }}{{ end }}{{ end }}";
// Qwen's layout: each call on its own line between the tags, with thinking.
constexpr const char* kTagged =
    "{{ if .Tools }}{{ json .Tools }}{{ end }}{{ range .Messages }}{{ if .Thinking }}<think>{{ .Thinking }}"
    "</think>{{ end }}{{ .Content }}{{ if .ToolCalls }}<tool_call>\n{{ range .ToolCalls }}"
    "{{ json .Function }}\n{{ end }}</tool_call>{{ end }}{{ end }}";
constexpr const char* kTaggedUnclosed =
    "{{ if .Tools }}{{ json .Tools }}{{ end }}{{ range .Messages }}{{ .Content }}{{ if .ToolCalls }}"
    "[TOOL_CALLS] {{ range .ToolCalls }}{{ json .Function }}{{ end }}{{ end }}{{ end }}";

PromptTemplate tmpl(const char* text) {
  auto t = choose_template(std::string(text), std::nullopt, "");
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : PromptTemplate{};
}

ChatRequest two_tools(const char* choice) {
  auto req = parse_chat(Json::parse(std::string(R"({"model":"m","tool_choice":)") + choice + R"(,"tools":[
      {"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{
          "x":{"type":"integer","minimum":0,"maximum":9}},"required":["x"]}}},
      {"type":"function","function":{"name":"b"}}]})"));
  EXPECT_TRUE(req.ok()) << req.status().message();
  return req.ok() ? std::move(req).value() : ChatRequest{};
}

std::string grammar(const PromptTemplate& t, const ChatRequest& req, bool opens_thinking = false) {
  auto g = forced_tool_call_grammar(t, req, opens_thinking);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? *g : "";
}

bool accepts(const std::string& gbnf, const std::string& text) {
  auto g = sample::parse_gbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().message() << "\n" << gbnf;
  if (!g.ok()) return false;
  sample::GrammarMatcher m(*g);
  return m.accept_bytes(text) && m.can_end();
}

// What the chat routes' parsers make of `text`, fed one byte at a time.
chat::ToolCallParser::Output parse(const PromptTemplate& t, const std::string& text, bool opens_thinking) {
  std::optional<chat::ThinkingParser> thinking;
  if (!t.think_tags.first.empty()) thinking.emplace(t.think_tags.first, t.think_tags.second);
  if (thinking && opens_thinking) thinking->start_in_thinking();
  chat::ToolCallParser tools(t.tool_tag, {"a", "b"});
  chat::ToolCallParser::Output all;
  auto take = [&](chat::ToolCallParser::Output o) {
    all.content += o.content;
    for (auto& c : o.calls) all.calls.push_back(std::move(c));
  };
  for (char c : text) {
    const std::string byte(1, c);
    take(tools.add(thinking ? thinking->add(byte).content : byte));
  }
  if (thinking) take(tools.add(thinking->finish().content));
  take(tools.finish());
  return all;
}

void expect_one_call(const PromptTemplate& t, const std::string& text, const char* name, const Json& args,
                     bool opens_thinking = false) {
  const chat::ToolCallParser::Output o = parse(t, text, opens_thinking);
  ASSERT_EQ(o.calls.size(), 1u) << text;
  EXPECT_EQ(o.calls[0].name, name);
  EXPECT_EQ(o.calls[0].arguments, args);
  EXPECT_EQ(o.content, "");  // the markup around the call is not content
}

TEST(ToolChoice, NothingForcedForAutoOrNone) {
  EXPECT_EQ(grammar(tmpl(kTagged), two_tools(R"("auto")")), "");
  EXPECT_EQ(grammar(tmpl(kTagged), two_tools(R"("none")")), "");
}

TEST(ToolChoice, BareJsonCalls) {
  const PromptTemplate t = tmpl(kBare);
  ASSERT_EQ(t.tool_tag, "{");
  const std::string any = grammar(t, two_tools(R"("required")"));
  const std::string call_a = R"({"name": "a", "arguments": {"x": 7}})";
  const std::string call_b = R"({"name":"b","arguments":{"free":[1]}})";
  EXPECT_TRUE(accepts(any, call_a));
  EXPECT_TRUE(accepts(any, call_b));
  EXPECT_FALSE(accepts(any, R"({"name": "a", "arguments": {"x": 10}})"));  // outside the schema
  EXPECT_FALSE(accepts(any, R"({"name": "a", "arguments": {}})"));         // x is required
  EXPECT_FALSE(accepts(any, R"({"name": "c", "arguments": {}})"));
  EXPECT_FALSE(accepts(any, "Sure! " + call_a));
  expect_one_call(t, call_a, "a", Json{{"x", 7}});
  expect_one_call(t, call_b, "b", Json::parse(R"({"free":[1]})"));

  const std::string named = grammar(t, two_tools(R"({"type":"function","function":{"name":"b"}})"));
  EXPECT_TRUE(accepts(named, call_b));
  EXPECT_FALSE(accepts(named, call_a));
}

TEST(ToolChoice, TaggedCallsKeepTheTemplatesTags) {
  const PromptTemplate t = tmpl(kTagged);
  ASSERT_EQ(t.tool_tag, "<tool_call>");
  const std::string named = grammar(t, two_tools(R"({"type":"function","function":{"name":"a"}})"));
  const std::string call = "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 0}}\n</tool_call>";
  EXPECT_TRUE(accepts(named, call));
  EXPECT_FALSE(accepts(named, R"({"name": "a", "arguments": {"x": 0}})"));
  EXPECT_FALSE(accepts(named, "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 0}}"));
  EXPECT_FALSE(accepts(named, "<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(accepts(named, call + "\n" + call));  // exactly one call
  EXPECT_FALSE(accepts(named, "<think>\nhm\n</think>\n\n" + call));
  expect_one_call(t, call, "a", Json{{"x", 0}});

  // A prompt that ends inside thinking: the grammar closes the block, then calls.
  const std::string after_thinking = grammar(t, two_tools(R"("required")"), true);
  const std::string closed = "</think>\n\n" + call;
  EXPECT_TRUE(accepts(after_thinking, closed));
  EXPECT_FALSE(accepts(after_thinking, call));
  expect_one_call(t, closed, "a", Json{{"x", 0}}, true);
}

TEST(ToolChoice, TagsWithoutAClosingTag) {
  const PromptTemplate t = tmpl(kTaggedUnclosed);
  ASSERT_EQ(t.tool_tag, "[TOOL_CALLS]");
  const std::string any = grammar(t, two_tools(R"("required")"));
  const std::string call = R"([TOOL_CALLS]{"name":"b","arguments":{}})";
  EXPECT_TRUE(accepts(any, call));
  EXPECT_FALSE(accepts(any, call + "]"));
  expect_one_call(t, call, "b", Json::object());
}

TEST(ToolChoice, ParametersTheGrammarCannotExpressAreAClientError) {
  auto req = parse_chat(Json::parse(R"({"model":"m","tool_choice":"required","tools":[
      {"type":"function","function":{"name":"a","parameters":{"type":"array","minItems":3,"maxItems":1}}}]})"));
  ASSERT_TRUE(req.ok()) << req.status().message();
  const auto g = forced_tool_call_grammar(tmpl(kTagged), *req, false);
  EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
  EXPECT_NE(g.status().message().find("tool_choice"), std::string::npos) << g.status().message();
}

TEST(ToolChoice, RequestValidation) {
  EXPECT_FALSE(parse_chat(Json::parse(R"({"tool_choice":"required"})")).ok());
  EXPECT_FALSE(parse_chat(Json::parse(R"({"tool_choice":"sometimes"})")).ok());
  EXPECT_FALSE(parse_chat(Json::parse(R"({"tool_choice":{"type":"function","function":{"name":"zz"}},
      "tools":[{"type":"function","function":{"name":"a"}}]})"))
                   .ok());
}

}  // namespace
}  // namespace paddock::server
