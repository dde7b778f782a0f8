// JSON schema -> grammar, checked end to end: a random walk over a toy vocabulary (single
// characters, split UTF-8 bytes and a few multi-character JSON tokens) with random logits,
// constrained by the grammar, must always end within 400 tokens in a value that parses and
// validates against the schema (with test_json.h's small validator). Also exhaustive integer
// range checks and error pointers.
#include "sample/json_schema.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sample/gbnf.h"
#include "sample/grammar_matcher.h"
#include "sample/number_ranges.h"
#include "sample/sampler.h"
#include "sample/test_json.h"

namespace paddock::sample {
namespace {

using Json = nlohmann::ordered_json;
using sample_test::is_json_prefix;
using sample_test::kBoundedSchemas;
using sample_test::random_walk;
using sample_test::validate;
using sample_test::Walk;

std::vector<std::string> toy_pieces() {
  std::vector<std::string> p;
  for (char c = 0x20; c < 0x7F; ++c) p.emplace_back(1, c);
  for (const char* t :
       {"\n", "\t",  "{\"",  "\": ", "\", \"",   "\"}",          "true", "false", "null", ", ",
        "12", "-0.", "\xC3", "\xA9", "\xC3\xA9", "\xE2\x82\xAC", "  ",   "\n  ",  "[\"",  "e+"}) {
    p.emplace_back(t);
  }
  p.emplace_back("<eos>");
  return p;
}

std::shared_ptr<const GrammarVocab> toy_vocab() {
  auto pieces = toy_pieces();
  const auto eos = static_cast<int32_t>(pieces.size() - 1);
  return std::make_shared<GrammarVocab>(std::move(pieces), std::vector<int32_t>{eos});
}

TEST(JsonSchema, RandomWalksYieldValidValues) {
  const auto vocab = toy_vocab();
  for (const char* text : kBoundedSchemas) {
    const Json schema = Json::parse(text);
    auto gbnf = json_schema_to_gbnf(schema);
    ASSERT_TRUE(gbnf.ok()) << gbnf.status().to_string() << "\n" << text;
    for (int64_t seed = 0; seed < 100; ++seed) {
      const Walk w = random_walk(*gbnf, vocab, seed, 400, nullptr);
      ASSERT_TRUE(w.ended) << "seed " << seed << " did not finish: " << w.text << "\n" << *gbnf;
      const Json v = Json::parse(w.text, nullptr, false);
      ASSERT_FALSE(v.is_discarded()) << "seed " << seed << " does not parse: " << w.text;
      EXPECT_TRUE(validate(v, schema, schema)) << "seed " << seed << " invalid: " << w.text << "\n" << text;
    }
  }
}

TEST(JsonSchema, FormatJsonKeepsEveryPrefixValid) {
  const auto vocab = toy_vocab();
  auto gbnf = format_to_gbnf(R"("json")");
  ASSERT_TRUE(gbnf.ok());
  int complete = 0;
  for (int64_t seed = 0; seed < 100; ++seed) {
    const Walk w = random_walk(*gbnf, vocab, seed, 200, [&](const std::string& prefix) {
      ASSERT_TRUE(is_json_prefix(prefix)) << "seed " << seed << ": " << prefix;
    });
    if (w.ended) {
      ++complete;
      const Json v = Json::parse(w.text, nullptr, false);
      EXPECT_TRUE(v.is_object()) << w.text;
    }
  }
  EXPECT_GT(complete, 0);
}

TEST(JsonSchema, PrefixCheckerSanity) {
  EXPECT_TRUE(is_json_prefix("{\"a\": tr"));
  EXPECT_TRUE(is_json_prefix("[1, -"));
  EXPECT_FALSE(is_json_prefix("{\"a\" x"));
  EXPECT_FALSE(is_json_prefix("{}}"));
}

TEST(JsonSchema, IntegerRangesAreExact) {
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {0, 0}, {0, 9}, {-5, 120}, {7, 345}, {-300, -17}, {100, 1000}, {-1, 1}, {19, 21}, {-99, 99}};
  for (auto [lo, hi] : ranges) {
    auto g = parse_gbnf("root ::= " + integer_range_gbnf(lo, hi));
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    for (int64_t x = -1100; x <= 1100; ++x) {
      GrammarMatcher m(*g);
      const bool ok = m.accept_bytes(std::to_string(x)) && m.can_end();
      EXPECT_EQ(ok, x >= lo && x <= hi) << x << " in [" << lo << ", " << hi << "]";
    }
    GrammarMatcher m(*g);
    EXPECT_FALSE(m.accept_bytes("-0") && m.can_end());
    GrammarMatcher lead(*g);
    EXPECT_FALSE(lead.accept_bytes("01") && lead.can_end());
  }
}

TEST(JsonSchema, NumberRangesStayInBounds) {
  auto g = parse_gbnf("root ::= " + number_range_gbnf(-3, 2, "frac") + "\nfrac ::= [0-9]{1,3}");
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  for (const char* in : {"-3", "-2.999", "-0.5", "0", "1.999", "2", "-0.0"}) {
    GrammarMatcher m(*g);
    EXPECT_TRUE(m.accept_bytes(in) && m.can_end()) << in;
  }
  for (const char* out : {"-4", "-3.5", "2.5", "3", "10"}) {
    GrammarMatcher m(*g);
    EXPECT_FALSE(m.accept_bytes(out) && m.can_end()) << out;
  }
}

bool schema_accepts(const char* schema, const std::string& text) {
  auto gbnf = json_schema_to_gbnf(std::string_view(schema));
  EXPECT_TRUE(gbnf.ok()) << gbnf.status().to_string();
  if (!gbnf.ok()) return false;
  auto g = parse_gbnf(*gbnf);
  EXPECT_TRUE(g.ok());
  GrammarMatcher m(*g);
  return m.accept_bytes(text) && m.can_end();
}

TEST(JsonSchema, AcceptsAndRejects) {
  const char* obj = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},
                        "c":{"type":"boolean"}},"required":["b"]})";
  EXPECT_TRUE(schema_accepts(obj, R"({"b": "x"})"));
  EXPECT_TRUE(schema_accepts(obj, R"({"a": 1, "b": "x", "c": true})"));
  EXPECT_TRUE(schema_accepts(obj, "{\n  \"a\": -7,\n  \"b\": \"\\u00e9\"\n}"));
  EXPECT_FALSE(schema_accepts(obj, R"({"a": 1})"));
  EXPECT_FALSE(schema_accepts(obj, R"({"b": "x", "a": 1})"));  // declared order
  EXPECT_FALSE(schema_accepts(obj, R"({"b": "x", "d": 1})"));  // no additional properties
  EXPECT_FALSE(schema_accepts(obj, R"({"b": "x",, "c": true})"));
  EXPECT_FALSE(schema_accepts(obj, "{\"b\":    \"x\"}"));   // whitespace is bounded
  EXPECT_FALSE(schema_accepts(obj, R"({"b": "\ud800"})"));  // lone surrogate escape
  const char* extra =
      R"({"type":"object","properties":{"a":{"type":"null"}},"additionalProperties":{"type":"integer"}})";
  EXPECT_TRUE(schema_accepts(extra, R"({"a": null, "n": 5, "m": 6})"));
  EXPECT_TRUE(schema_accepts(extra, R"({"n": 5})"));
  EXPECT_FALSE(schema_accepts(extra, R"({"n": "5"})"));
  const char* arr = R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})";
  EXPECT_TRUE(schema_accepts(arr, "[1, 2]"));
  EXPECT_TRUE(schema_accepts(arr, "[1,2,3]"));
  EXPECT_FALSE(schema_accepts(arr, "[1]"));
  EXPECT_FALSE(schema_accepts(arr, "[1, 2, 3, 4]"));
  const char* rec =
      R"({"$defs":{"node":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},
                        "required":["next"]}},"$ref":"#/$defs/node"})";
  EXPECT_TRUE(schema_accepts(rec, R"({"next": {"next": null}})"));
  EXPECT_FALSE(schema_accepts(rec, R"({"next": {}})"));
  EXPECT_TRUE(schema_accepts(R"({"type":"string","format":"date-time"})", R"("2024-02-29T13:05:00Z")"));
  EXPECT_FALSE(schema_accepts(R"({"type":"string","format":"date"})", R"("2024-13-01")"));
  EXPECT_TRUE(schema_accepts(R"({"enum":[1,"a",null,[true]]})", "[true]"));
  EXPECT_FALSE(schema_accepts(R"({"enum":[1,"a",null,[true]]})", "2"));
}

void expect_schema_error(const char* schema, const std::string& needle) {
  auto r = json_schema_to_gbnf(std::string_view(schema));
  ASSERT_FALSE(r.ok()) << schema;
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

TEST(JsonSchema, ErrorsNameThePointer) {
  expect_schema_error(R"({"properties":{"a":{"type":"strin"}}})", "/properties/a/type");
  expect_schema_error(R"({"properties":{"a/b":{"type":"array","minItems":3,"maxItems":1}}})",
                      "/properties/a~1b");
  expect_schema_error(R"({"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}})",
                      "/properties/a/$ref");
  expect_schema_error(R"({"$ref":"http://example.com/s.json"})", "local reference");
  expect_schema_error(R"({"properties":{"a":{"enum":[]}}})", "/properties/a/enum");
  expect_schema_error(R"({"type":"integer","minimum":5,"maximum":4})", "no integer");
  expect_schema_error(R"({"type":"object","properties":{"a":{}},"required":["b"]})", "\"b\"");
  expect_schema_error(R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})", "recursion");
  expect_schema_error("{", "valid JSON");
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"type":"array","items":)";
  deep += "{}" + std::string(200, '}');
  expect_schema_error(deep.c_str(), "nesting");
}

TEST(JsonSchema, FixedTextAroundTheValue) {
  const Json schema = Json::parse(R"({"type":"object","properties":{"n":{"enum":[1,2]}},"required":["n"]})");
  auto gbnf = json_schema_to_gbnf(schema, "<tool_call>\n", "\n</tool_call>");
  ASSERT_TRUE(gbnf.ok()) << gbnf.status().to_string();
  auto g = parse_gbnf(*gbnf);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  auto accepts = [&](const std::string& text) {
    GrammarMatcher m(*g);
    return m.accept_bytes(text) && m.can_end();
  };
  EXPECT_TRUE(accepts("<tool_call>\n{\"n\": 2}\n</tool_call>"));
  EXPECT_TRUE(accepts("<tool_call>\n{\"n\":1} \n</tool_call>"));  // the value's own trailing space
  EXPECT_FALSE(accepts("{\"n\": 2}"));
  EXPECT_FALSE(accepts("<tool_call>\n{\"n\": 2}"));
  EXPECT_FALSE(accepts("<tool_call>\n{\"n\": 3}\n</tool_call>"));
  EXPECT_FALSE(accepts("<tool_call>\n{\"n\": 2}\n</tool_call>x"));
  // Markup bytes are escaped, so quotes and control characters cannot break the grammar.
  auto quoted = json_schema_to_gbnf(schema, "\"\\\x01", "");
  ASSERT_TRUE(quoted.ok()) << quoted.status().to_string();
  auto qg = parse_gbnf(*quoted);
  ASSERT_TRUE(qg.ok()) << qg.status().to_string();
  GrammarMatcher m(*qg);
  EXPECT_TRUE(m.accept_bytes("\"\\\x01{\"n\":1}") && m.can_end());
}

TEST(JsonSchema, FormatField) {
  auto none = format_to_gbnf("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(format_to_gbnf(R"("yaml")").ok());
  EXPECT_FALSE(format_to_gbnf("[1]").ok());
  auto obj = format_to_gbnf(R"({"type":"object","properties":{"a":{"type":"null"}}})");
  ASSERT_TRUE(obj.ok());
  EXPECT_NE(obj->find("root ::="), std::string::npos);
}

}  // namespace
}  // namespace paddock::sample
