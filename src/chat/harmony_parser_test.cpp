#include "chat/harmony_parser.h"

#include <gtest/gtest.h>

namespace paddock::chat {
namespace {

HarmonyParser::Output feed(std::string_view text, const std::vector<size_t>& cuts) {
  int n = 0;
  HarmonyParser p([&] { return "call_" + std::to_string(n++); });
  HarmonyParser::Output all;
  auto add = [&](HarmonyParser::Output o) {
    all.thinking += o.thinking;
    all.content += o.content;
    for (auto& c : o.calls) all.calls.push_back(std::move(c));
  };
  size_t prev = 0;
  for (size_t c : cuts) {
    add(p.add(text.substr(prev, c - prev)));
    prev = c;
  }
  add(p.add(text.substr(prev)));
  add(p.finish());
  return all;
}

struct Case {
  const char* in;
  const char* thinking;
  const char* content;
  const char* call_name;  // "" = no call
  const char* call_args;
};

// Every case is fed whole, then split at each byte boundary, then one byte at a time:
// the result must not depend on how the output was chunked.
TEST(HarmonyParser, SplitsChannelsAtEveryBoundary) {
  const Case cases[] = {
      {"<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi!",
       "Think.", "Hi!", "", ""},
      {"<|channel|>final<|message|>Just this.<|return|>", "", "Just this.", "", ""},
      {"<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
       "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}",
       "Need weather.", "", "get_weather", R"({"city":"Paris"})"},
      {" to=functions.lookup<|channel|>commentary json<|message|>{\"q\": [1, 2]}<|call|>", "", "", "lookup",
       R"({"q":[1,2]})"},
      {"<|channel|>commentary<|message|>Let me check.<|end|>", "", "Let me check.", "", ""},
      {"<|channel|>commentary to=functions.now<|constrain|>json<|message|>", "", "", "now", "{}"},
      {"<|channel|>commentary to=functions.f <|constrain|>json<|message|>not json", "", "not json", "", ""},
      {"<|channel|>analysis<|message|>a <|en", "a <|en", "", "", ""},
      {"<|channel|>analysis<|message|>x<|end|>stray<|start|>assistant<|channel|>final<|message|>y", "x", "y",
       "", ""},
      {"<|channel|>final<|message|>tags <|start|> inside", "", "tags <|start|> inside", "", ""},
      {"<|channel|>anal", "", "", "", ""},
  };
  for (const Case& c : cases) {
    const std::string_view in = c.in;
    std::vector<std::vector<size_t>> splits = {{}};
    for (size_t i = 1; i < in.size(); ++i) splits.push_back({i});
    std::vector<size_t> bytes;
    for (size_t i = 1; i < in.size(); ++i) bytes.push_back(i);
    splits.push_back(bytes);
    for (const auto& cuts : splits) {
      const HarmonyParser::Output o = feed(in, cuts);
      SCOPED_TRACE(std::string(in) + " cut at " + (cuts.empty() ? "-" : std::to_string(cuts[0])));
      EXPECT_EQ(o.thinking, c.thinking);
      EXPECT_EQ(o.content, c.content);
      if (*c.call_name == '\0') {
        EXPECT_TRUE(o.calls.empty());
        continue;
      }
      ASSERT_EQ(o.calls.size(), 1u);
      EXPECT_EQ(o.calls[0].name, c.call_name);
      EXPECT_EQ(o.calls[0].arguments.dump(), c.call_args);
      EXPECT_EQ(o.calls[0].id, "call_0");
      EXPECT_EQ(o.calls[0].index, 0);
    }
  }
}

TEST(HarmonyParser, ThinkingStreamsBeforeTheMessageEnds) {
  HarmonyParser p;
  HarmonyParser::Output o = p.add("<|channel|>analysis<|message|>step one <|");
  EXPECT_EQ(o.thinking, "step one ");  // "<|" may begin <|end|>: held back
  o = p.add("end|><|start|>assistant<|channel|>final<|message|>ok");
  EXPECT_EQ(o.thinking, "");
  EXPECT_EQ(o.content, "ok");
}

TEST(HarmonyParser, CallsInOneOutputAreIndexed) {
  HarmonyParser p([] { return std::string("id"); });
  HarmonyParser::Output o = p.add(
      "<|channel|>commentary to=functions.a<|message|>{}<|call|><|start|>assistant to=functions.b"
      "<|channel|>commentary<|message|>{\"x\":1}");
  HarmonyParser::Output rest = p.finish();
  ASSERT_EQ(o.calls.size(), 1u);
  ASSERT_EQ(rest.calls.size(), 1u);
  EXPECT_EQ(o.calls[0].name, "a");
  EXPECT_EQ(rest.calls[0].name, "b");
  EXPECT_EQ(rest.calls[0].index, 1);
}

TEST(HarmonyParser, DetectsHarmonyTemplates) {
  EXPECT_TRUE(HarmonyParser::is_harmony("{{- '<|start|>assistant<|channel|>final<|message|>' }}"));
  EXPECT_FALSE(HarmonyParser::is_harmony("<|im_start|>assistant\n<think>"));
}

}  // namespace
}  // namespace paddock::chat
