// Test helpers for structured output, shared by src/sample tests and the golden tests:
// a JSON Schema validator for the subset json_schema.h converts, a JSON-prefix checker, and
// a random walk that samples random logits under a grammar. Tests only (uses GoogleTest).
//   const Walk w = random_walk(gbnf, vocab, seed, 400, nullptr);
//   EXPECT_TRUE(validate(Json::parse(w.text), schema, schema));
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sample/gbnf.h"
#include "sample/grammar_matcher.h"
#include "sample/sampler.h"

namespace paddock::sample_test {

using Json = nlohmann::ordered_json;
using sample::GrammarConstraint;
using sample::GrammarVocab;
using sample::parse_gbnf;
using sample::Sampler;
using sample::SamplerParams;

inline size_t code_points(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return n;
}

// The subset of JSON Schema the converter supports, as a validator with JSON Schema's own
// semantics (additional properties allowed unless `false`; the grammar is stricter).
inline bool validate(const Json& v, const Json& s, const Json& root) {
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

// A valid JSON prefix fails to parse only once the parser hits the end of the input.
inline bool is_json_prefix(const std::string& text) {
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

struct Walk {
  std::string text;
  bool ended = false;
};

// Random logits each step; the grammar decides what may be drawn.
inline Walk random_walk(const std::string& gbnf, const std::shared_ptr<const GrammarVocab>& vocab,
                        int64_t seed, int max_tokens,
                        const std::function<void(const std::string&)>& check_prefix) {
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

// Schemas whose strings, arrays and numbers are bounded: every random walk must finish
// within 400 tokens.
inline constexpr const char* const kBoundedSchemas[] = {
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

}  // namespace paddock::sample_test
