// JSON schema -> grammar, checked end to end: a random walk over a toy vocabulary (single
// characters, split UTF-8 bytes and a few multi-character JSON tokens) with random logits,
// constrained by the grammar, must always end within 400 tokens in a value that parses and
// validates against the schema (with the small validator below). Also exhaustive integer
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

namespace paddock::sample {
namespace {

using Json = nlohmann::ordered_json;

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return n;
}

// The subset of JSON Schema the converter supports, as a validator with JSON Schema's own
// semantics (additional properties allowed unless `false`; the grammar is stricter).
bool validate(const Json& v, const Json& s, const Json& root) {
  if (s.is_boolean()) return s.get<bool>();
  if (s.contains("$ref"))
    return validate(v, root.at(Json::json_pointer(s["$ref"].get<std::string>().substr(1))), root);
  if (s.contains("const")) return v == s["const"];
  if (s.contains("enum")) return std::find(s["enum"].begin(), s["enum"].end(), v) != s["enum"].end();
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!s.contains(key)) continue;
    for (const Json& alt : s[key]) {
      if (validate(v, alt, root)) return true;
    }
    return false;
  }
  if (s.contains("allOf")) {
    for (const Json& part : s["allOf"]) {
      if (!validate(v, part, root)) return false;
    }
    return true;
  }
  if (s.contains("type") && s["type"].is_array()) {
    for (const Json& t : s["type"]) {
      Json one = s;
      one["type"] = t;
      if (validate(v, one, root)) return true;
    }
    return false;
  }
  const std::string type = s.value("type", s.contains("properties") ? "object"
                                           : s.contains("items")    ? "array"
                                                                    : "");
  if (type == "object") {
    if (!v.is_object()) return false;
    const Json props = s.value("properties", Json::object());
    for (const Json& r : s.value("required", Json::array())) {
      if (!v.contains(r.get<std::string>())) return false;
    }
    for (const auto& [k, val] : v.items()) {
      if (props.contains(k)) {
        if (!validate(val, props[k], root)) return false;
      } else if (s.contains("additionalProperties") && s["additionalProperties"].is_object()) {
        if (!validate(val, s["additionalProperties"], root)) return false;
      } else if (s.contains("additionalProperties") && s["additionalProperties"] == false) {
        return false;
      }
    }
    return true;
  }
  if (type == "array") {
    if (!v.is_array()) return false;
    if (v.size() < s.value("minItems", size_t{0}) || v.size() > s.value("maxItems", size_t{1000000}))
      return false;
    if (s.contains("items")) {
      for (const Json& item : v) {
        if (!validate(item, s["items"], root)) return false;
      }
    }
    return true;
  }
  if (type == "string") {
    if (!v.is_string()) return false;
    const size_t n = code_points(v.get<std::string>());
    if (s.value("format", "") == "date") return n == 10 && v.get<std::string>()[4] == '-';
    return n >= s.value("minLength", size_t{0}) && n <= s.value("maxLength", size_t{1000000});
  }
  if (type == "integer" || type == "number") {
    if (!v.is_number() || (type == "integer" && !v.is_number_integer())) return false;
    const double x = v.get<double>();
    return x >= s.value("minimum", -1e300) && x <= s.value("maximum", 1e300);
  }
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return true;
}

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

struct Walk {
  std::string text;
  bool ended = false;
};

// Random logits each step; the grammar decides what may be drawn.
Walk random_walk(const std::string& gbnf, const std::shared_ptr<const GrammarVocab>& vocab, int64_t seed,
                 int max_tokens, const std::function<void(const std::string&)>& check_prefix) {
  auto g = parse_gbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().to_string() << "\n" << gbnf;
  if (!g.ok()) return {};
  SamplerParams p;
  p.seed = seed;
  p.temperature = 1.0f;
  p.top_k = 20;
  p.repeat_penalty = 1.0f;
  const int32_t n = vocab->size();
  auto s = Sampler::create(p, n, GrammarConstraint{*g, vocab});
  EXPECT_TRUE(s.ok());
  std::mt19937 logits_rng(static_cast<uint32_t>(seed) * 7919u + 1);
  std::vector<float> logits(static_cast<size_t>(n));
  Walk w;
  for (int i = 0; i < max_tokens; ++i) {
    for (float& l : logits) l = static_cast<float>(logits_rng() % 4000) / 1000.0f;
    auto t = s->sample(logits);
    EXPECT_TRUE(t.ok()) << t.status().to_string() << " after " << w.text;
    if (!t.ok()) return w;
    EXPECT_TRUE(s->accept(*t).is_ok());
    if (vocab->is_eog(*t)) {
      w.ended = true;
      return w;
    }
    w.text += vocab->piece(*t);
    if (check_prefix) check_prefix(w.text);
  }
  return w;
}

std::shared_ptr<const GrammarVocab> toy_vocab() {
  auto pieces = toy_pieces();
  const auto eos = static_cast<int32_t>(pieces.size() - 1);
  return std::make_shared<GrammarVocab>(std::move(pieces), std::vector<int32_t>{eos});
}

const char* const kBoundedSchemas[] = {
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":8},
        "age":{"type":"integer","minimum":0,"maximum":120},
        "tags":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":3},
        "ok":{"type":"boolean"},"score":{"type":"number","minimum":-5,"maximum":5}},
        "required":["name","age"],"additionalProperties":false})",
    R"({"type":"array","minItems":1,"maxItems":4,"items":{"anyOf":[
        {"type":"integer","minimum":-20,"maximum":20},{"type":"null"},{"enum":["x",1,true,null,{"k":[1]}]}]}})",
    R"({"$defs":{"pt":{"type":"object","properties":{"x":{"type":"integer","minimum":0,"maximum":9},
        "y":{"type":"integer","minimum":-9,"maximum":0}},"required":["x","y"]}},
        "type":"object","properties":{"a":{"$ref":"#/$defs/pt"},"b":{"$ref":"#/$defs/pt"}},"required":["a"]})",
    R"({"type":"object","properties":{"p":{"type":"boolean"},"q":{"type":"null"},
        "r":{"type":["integer","null"],"minimum":100,"maximum":1000},"s":{"const":"fixed"}}})",
    R"({"oneOf":[{"type":"string","format":"date"},{"type":"string","minLength":2,"maxLength":3}]})",
    R"({"allOf":[{"properties":{"a":{"type":"integer","minimum":1,"maximum":3}},"required":["a"]},
        {"properties":{"b":{"enum":["u","v"]}},"required":["b"]}]})",
};

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

// A valid JSON prefix fails to parse only once the parser hits the end of the input.
bool is_json_prefix(const std::string& text) {
  struct Sax : nlohmann::json_sax<Json> {
    size_t error_at = 0;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
      error_at = position;
      return false;
    }
  } sax;
  if (Json::sax_parse(text, &sax)) return true;
  return sax.error_at > text.size();
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
