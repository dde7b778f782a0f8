// Schema -> GBNF: every subschema becomes one rule named after where it sits; primitive
// rules (space, string, number, ...) are emitted once, on first use.
#include "sample/json_schema.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "sample/gbnf.h"
#include "sample/number_ranges.h"

namespace paddock::sample {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 64;
constexpr size_t kMaxRules = 20000;

struct Primitive {
  const char* name;
  const char* body;
  std::vector<const char*> deps;
};

// llama.cpp's primitive rules, with whitespace bounded to one run and exponents to two
// digits (so every number fits a double: parsers such as nlohmann reject 1e400).
const Primitive kPrimitives[] = {
    {"space", R"(| " " | "\n" [ \t]{0,20})", {}},
    {"boolean", R"(("true" | "false") space)", {"space"}},
    {"null", R"("null" space)", {"space"}},
    {"integral-part", R"([0] | [1-9] [0-9]{0,15})", {}},
    {"decimal-part", R"([0-9]{1,16})", {}},
    {"integer", R"(("-"? integral-part) space)", {"integral-part", "space"}},
    {"number",
     R"(("-"? integral-part) ("." decimal-part)? ([eE] [-+]? [0-9]{1,2})? space)",
     {"integral-part", "decimal-part", "space"}},
    // Escapes of UTF-16 surrogates are left out: a lone one is invalid JSON text.
    {"char",
     R"([^"\\\x7F\x00-\x1F\uD800-\uDFFF] | [\\] (["\\/bfnrt] | "u" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2})))",
     {}},
    {"string", R"("\"" char* "\"" space)", {"char", "space"}},
    {"value",
     R"(object | array | string | number | boolean | null)",
     {"object", "array", "string", "number", "boolean", "null"}},
    {"object",
     R"("{" space ( string ":" space value ("," space string ":" space value)* )? "}" space)",
     {"string", "value", "space"}},
    {"array", R"("[" space ( value ("," space value)* )? "]" space)", {"value", "space"}},
    {"date", R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] ))", {}},
    {"time",
     R"(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))",
     {}},
    {"date-time", R"(date "T" time)", {"date", "time"}},
    {"uuid",
     R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})",
     {}},
};

std::string escape_pointer_token(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A GBNF string literal for exactly these bytes.
std::string literal(const std::string& bytes) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "\"";
  for (char ch : bytes) {
    auto c = static_cast<uint8_t>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string sanitize(const std::string& hint) {
  std::string out;
  for (char c : hint) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (out.size() >= 40) break;
    out += word ? c : '-';
  }
  return out.empty() ? "r" : out;
}

class Converter {
 public:
  explicit Converter(const Json& root) : root_(root) {}

  Result<std::string> run(const std::string& prefix, const std::string& suffix) {
    std::string top = visit(root_, "root", "", 0);
    if (!status_.is_ok()) return status_;
    if (!prefix.empty() || !suffix.empty()) top = "(" + top + ")";
    if (!prefix.empty()) top = literal(prefix) + " " + top;
    if (!suffix.empty()) top += " " + literal(suffix);
    std::string out = "root ::= " + top + "\n";
    for (const std::string& name : order_) {
      if (name != "root") out += name + " ::= " + rules_[name] + "\n";
    }
    return out;
  }

 private:
  // Records the first error; callers return "" and every visit stops once status_ is set.
  void fail(const std::string& ptr, const std::string& msg) {
    if (status_.is_ok()) status_ = invalid_argument("schema at " + (ptr.empty() ? "/" : ptr) + ": " + msg);
  }

  // Adds `body` as a rule named after `hint`; returns the rule's name.
  std::string add_rule(const std::string& hint, const std::string& body) {
    std::string base = sanitize(hint);
    std::string name = base;
    for (int i = 1; rules_.count(name) || is_primitive(name); ++i) name = base + std::to_string(i);
    reserve(name, body);
    return name;
  }
  void reserve(const std::string& name, const std::string& body) {
    if (!rules_.count(name)) order_.push_back(name);
    rules_[name] = body;
    if (rules_.size() > kMaxRules)
      fail("", "the grammar would need more than " + std::to_string(kMaxRules) + " rules");
  }
  static bool is_primitive(const std::string& name) {
    for (const Primitive& p : kPrimitives) {
      if (name == p.name) return true;
    }
    return name == "root";
  }
  std::string primitive(const std::string& name) {
    for (const Primitive& p : kPrimitives) {
      if (name != p.name) continue;
      if (!rules_.count(name)) {
        reserve(name, p.body);
        for (const char* dep : p.deps) primitive(dep);
      }
      return name;
    }
    fail("", "internal: unknown primitive " + name);
    return name;
  }

  std::optional<int64_t> get_uint(const Json& s, const char* key, const std::string& ptr) {
    if (!s.contains(key)) return std::nullopt;
    const Json& v = s[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      fail(ptr + "/" + key, "expected a non-negative integer, found " + v.dump());
      return std::nullopt;
    }
    if (v.get<int64_t>() > kMaxRepetition) {
      fail(ptr + "/" + key, "expected at most " + std::to_string(kMaxRepetition) + ", found " + v.dump());
      return std::nullopt;
    }
    return v.get<int64_t>();
  }

  // "{m,n}" repetition suffix (or "*" / "?" / "").
  static std::string repetition(int64_t lo, std::optional<int64_t> hi) {
    if (!hi) return lo == 0 ? "*" : "{" + std::to_string(lo) + ",}";
    if (lo == *hi) return lo == 1 ? "" : "{" + std::to_string(lo) + "}";
    if (lo == 0 && *hi == 1) return "?";
    return "{" + std::to_string(lo) + "," + std::to_string(*hi) + "}";
  }

  std::string visit(const Json& s, const std::string& hint, const std::string& ptr, int depth) {
    if (!status_.is_ok()) return "";
    if (depth > kMaxDepth) {
      fail(ptr, "expected at most " + std::to_string(kMaxDepth) + " levels of nesting");
      return "";
    }
    if (s.is_boolean()) {
      if (s.get<bool>()) return primitive("value");
      fail(ptr, "the schema `false` matches nothing");
      return "";
    }
    if (!s.is_object()) {
      fail(ptr, std::string("expected a schema object, found ") + s.type_name());
      return "";
    }
    if (s.contains("$ref")) return visit_ref(s["$ref"], ptr, depth);
    if (s.contains("const")) {
      primitive("space");
      return add_rule(hint, literal(s["const"].dump()) + " space");
    }
    return visit_rest(s, hint, ptr, depth);
  }

  std::string visit_rest(const Json& s, const std::string& hint, const std::string& ptr, int depth) {
    if (s.contains("enum")) {
      const Json& e = s["enum"];
      if (!e.is_array() || e.empty()) {
        fail(ptr + "/enum", "expected a non-empty array");
        return "";
      }
      std::string body = "(";
      for (size_t i = 0; i < e.size(); ++i) body += (i ? " | " : "") + literal(e[i].dump());
      primitive("space");
      return add_rule(hint, body + ") space");
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      const Json& alts = s[key];
      const std::string p = ptr + "/" + key;
      if (!alts.is_array() || alts.empty()) {
        fail(p, "expected a non-empty array of schemas");
        return "";
      }
      std::string body;
      for (size_t i = 0; i < alts.size(); ++i) {
        body += (i ? " | " : "") +
                visit(alts[i], hint + "-" + std::to_string(i), p + "/" + std::to_string(i), depth + 1);
      }
      return add_rule(hint, body);
    }
    if (s.contains("allOf")) return visit_all_of(s, hint, ptr, depth);
    if (s.contains("type") && s["type"].is_array()) {
      const Json& types = s["type"];
      if (types.empty()) {
        fail(ptr + "/type", "expected a non-empty array of type names");
        return "";
      }
      std::string body;
      for (size_t i = 0; i < types.size(); ++i) {
        Json one = s;
        one["type"] = types[i];
        body += (i ? " | " : "") + visit(one, hint + "-" + std::to_string(i), ptr, depth + 1);
      }
      return add_rule(hint, body);
    }
    std::string type;
    if (s.contains("type")) {
      if (!s["type"].is_string()) {
        fail(ptr + "/type", std::string("expected a type name, found ") + s["type"].type_name());
        return "";
      }
      type = s["type"].get<std::string>();
    } else if (s.contains("properties")) {
      type = "object";
    } else if (s.contains("items") || s.contains("prefixItems")) {
      type = "array";
    } else {
      return primitive("value");
    }
    if (type == "object") return visit_object(s, hint, ptr, depth);
    if (type == "array") return visit_array(s, hint, ptr, depth);
    if (type == "string") return visit_string(s, hint, ptr);
    if (type == "integer" || type == "number") return visit_number(s, hint, ptr, type == "integer");
    if (type == "boolean") return primitive("boolean");
    if (type == "null") return primitive("null");
    fail(ptr + "/type",
         "expected one of object, array, string, integer, number, boolean, null; found \"" + type + "\"");
    return "";
  }

  std::string visit_ref(const Json& ref, const std::string& ptr, int depth) {
    if (!ref.is_string() || ref.get<std::string>().rfind('#', 0) != 0) {
      fail(ptr + "/$ref", "expected a local reference such as \"#/$defs/name\", found " + ref.dump());
      return "";
    }
    const std::string target = ref.get<std::string>().substr(1);
    if (auto it = refs_.find(target); it != refs_.end()) return it->second;
    const Json* node = nullptr;
    try {
      node = &root_.at(Json::json_pointer(target));
    } catch (const nlohmann::json::exception&) {
      fail(ptr + "/$ref", "reference " + ref.dump() + " does not resolve within the schema");
      return "";
    }
    const size_t slash = target.rfind('/');
    std::string name = add_rule(slash == std::string::npos ? "ref" : "ref-" + target.substr(slash + 1), "");
    refs_[target] = name;
    const std::string body = visit(*node, name + "-body", target, depth + 1);
    rules_[name] = body;
    return name;
  }

  std::string visit_all_of(const Json& s, const std::string& hint, const std::string& ptr, int depth) {
    const Json& parts = s["allOf"];
    if (!parts.is_array() || parts.empty()) {
      fail(ptr + "/allOf", "expected a non-empty array of schemas");
      return "";
    }
    if (parts.size() == 1) return visit(parts[0], hint, ptr + "/allOf/0", depth + 1);
    // Objects merge: properties and required of every part, in order.
    Json merged = {{"type", "object"}, {"properties", Json::object()}, {"required", Json::array()}};
    for (size_t i = 0; i < parts.size(); ++i) {
      const Json* part = &parts[i];
      for (int hops = 0; part->is_object() && part->contains("$ref") && hops < 8; ++hops) {
        const Json& r = (*part)["$ref"];
        if (!r.is_string() || r.get<std::string>().rfind('#', 0) != 0) break;
        try {
          part = &root_.at(Json::json_pointer(r.get<std::string>().substr(1)));
        } catch (const nlohmann::json::exception&) {
          fail(ptr + "/allOf/" + std::to_string(i) + "/$ref", "reference " + r.dump() + " does not resolve");
          return "";
        }
      }
      if (!part->is_object() || !part->contains("properties") || !(*part)["properties"].is_object()) {
        fail(ptr + "/allOf/" + std::to_string(i),
             "allOf is supported for object schemas with properties only");
        return "";
      }
      for (const auto& [k, v] : (*part)["properties"].items()) merged["properties"][k] = v;
      if (part->contains("required") && (*part)["required"].is_array()) {
        for (const Json& r : (*part)["required"]) merged["required"].push_back(r);
      }
    }
    return visit_object(merged, hint, ptr + "/allOf", depth);
  }

  std::string visit_object(const Json& s, const std::string& hint, const std::string& ptr, int depth) {
    primitive("space");
    std::optional<std::string> extra;  // rule for additional property values
    if (s.contains("additionalProperties")) {
      const Json& ap = s["additionalProperties"];
      if (ap.is_object()) {
        extra = visit(ap, hint + "-additional", ptr + "/additionalProperties", depth + 1);
      } else if (ap.is_boolean()) {
        if (ap.get<bool>()) extra = primitive("value");
      } else {
        fail(ptr + "/additionalProperties",
             std::string("expected a boolean or a schema, found ") + ap.type_name());
        return "";
      }
    }
    if (!s.contains("properties") && !s.contains("additionalProperties")) return primitive("object");
    const Json empty = Json::object();
    const Json& props = s.contains("properties") ? s["properties"] : empty;
    if (!props.is_object()) {
      fail(ptr + "/properties", std::string("expected an object, found ") + props.type_name());
      return "";
    }
    std::vector<std::string> required_names;
    if (s.contains("required")) {
      const Json& req = s["required"];
      if (!req.is_array()) {
        fail(ptr + "/required", std::string("expected an array of names, found ") + req.type_name());
        return "";
      }
      for (size_t i = 0; i < req.size(); ++i) {
        if (!req[i].is_string()) {
          fail(ptr + "/required/" + std::to_string(i),
               std::string("expected a string, found ") + req[i].type_name());
          return "";
        }
        required_names.push_back(req[i].get<std::string>());
      }
    }
    struct Prop {
      std::string kv;
      bool required;
    };
    std::vector<Prop> list;
    for (const auto& [key, sub] : props.items()) {
      const std::string p = ptr + "/properties/" + escape_pointer_token(key);
      const std::string value = visit(sub, hint + "-" + key, p, depth + 1);
      if (!status_.is_ok()) return "";
      const bool req = std::find(required_names.begin(), required_names.end(), key) != required_names.end();
      list.push_back({literal(Json(key).dump()) + " space \":\" space " + value, req});
    }
    std::string extra_kv;
    if (extra) extra_kv = add_rule(hint + "-kv", primitive("string") + " \":\" space " + *extra);
    // first(i): no property written yet, properties i.. remain; rest(i): one is written, so
    // each further property needs a leading comma. Linear in the number of properties.
    const size_t n = list.size();
    std::vector<std::string> first(n + 1), rest(n + 1);
    rest[n] = extra ? "( \",\" space " + extra_kv + " )*" : "";
    first[n] = extra ? "( " + extra_kv + " ( \",\" space " + extra_kv + " )* )?" : "";
    for (size_t i = n; i-- > 0;) {
      const std::string r = add_rule(hint + "-rest" + std::to_string(i), "");
      const std::string f = add_rule(hint + "-first" + std::to_string(i), "");
      rules_[r] = list[i].required ? "\",\" space " + list[i].kv + " " + rest[i + 1]
                                   : "( \",\" space " + list[i].kv + " )? " + rest[i + 1];
      rules_[f] = list[i].required ? list[i].kv + " " + rest[i + 1]
                                   : list[i].kv + " " + rest[i + 1] + " | " + first[i + 1];
      if (rules_[f].empty() || rules_[f].back() == ' ') rules_[f] += "\"\"";
      rest[i] = r;
      first[i] = f;
    }
    for (const std::string& name : required_names) {
      if (!props.contains(name)) {
        fail(ptr + "/required", "required property \"" + name + "\" is not in properties");
        return "";
      }
    }
    return add_rule(hint, "\"{\" space " + first[0] + " \"}\" space");
  }

  std::string visit_array(const Json& s, const std::string& hint, const std::string& ptr, int depth) {
    primitive("space");
    const auto min_items = get_uint(s, "minItems", ptr);
    const auto max_items = get_uint(s, "maxItems", ptr);
    if (!status_.is_ok()) return "";
    if (s.contains("prefixItems")) {
      const Json& tuple = s["prefixItems"];
      if (!tuple.is_array()) {
        fail(ptr + "/prefixItems", std::string("expected an array of schemas, found ") + tuple.type_name());
        return "";
      }
      std::string body = "\"[\" space";
      for (size_t i = 0; i < tuple.size(); ++i) {
        if (i) body += " \",\" space";
        body += " " + visit(tuple[i], hint + "-" + std::to_string(i),
                            ptr + "/prefixItems/" + std::to_string(i), depth + 1);
      }
      return add_rule(hint, body + " \"]\" space");
    }
    const std::string item = s.contains("items")
                                 ? visit(s["items"], hint + "-item", ptr + "/items", depth + 1)
                                 : primitive("value");
    const int64_t lo = min_items.value_or(0);
    if (max_items && *max_items < lo) {
      fail(ptr,
           "expected minItems <= maxItems, found " + std::to_string(lo) + " > " + std::to_string(*max_items));
      return "";
    }
    std::string list;
    if (max_items && *max_items == 0) {
      list = "";
    } else {
      std::optional<int64_t> more_hi;
      if (max_items) more_hi = *max_items - 1;
      const std::string more =
          "( \",\" space " + item + " )" + repetition(std::max<int64_t>(lo - 1, 0), more_hi);
      list = lo == 0 ? "( " + item + " " + more + " )?" : item + " " + more;
    }
    return add_rule(hint, "\"[\" space " + list + " \"]\" space");
  }

  std::string visit_string(const Json& s, const std::string& hint, const std::string& ptr) {
    primitive("space");
    if (s.contains("format") && s["format"].is_string()) {
      const std::string f = s["format"].get<std::string>();
      if (f == "date" || f == "time" || f == "date-time" || f == "uuid") {
        return add_rule(hint, "\"\\\"\" " + primitive(f) + " \"\\\"\" space");
      }
    }
    const auto min_len = get_uint(s, "minLength", ptr);
    const auto max_len = get_uint(s, "maxLength", ptr);
    if (!status_.is_ok()) return "";
    if (!min_len && !max_len) return primitive("string");
    const int64_t lo = min_len.value_or(0);
    if (max_len && *max_len < lo) {
      fail(ptr,
           "expected minLength <= maxLength, found " + std::to_string(lo) + " > " + std::to_string(*max_len));
      return "";
    }
    const std::string chars = max_len && *max_len == 0 ? "" : primitive("char") + repetition(lo, max_len);
    return add_rule(hint, "\"\\\"\" " + chars + " \"\\\"\" space");
  }

  std::optional<double> get_number(const Json& s, const char* key, const std::string& ptr) {
    if (!s.contains(key)) return std::nullopt;
    if (!s[key].is_number()) {
      fail(ptr + "/" + key, std::string("expected a number, found ") + s[key].type_name());
      return std::nullopt;
    }
    return s[key].get<double>();
  }

  std::string visit_number(const Json& s, const std::string& hint, const std::string& ptr, bool integer) {
    primitive("space");
    const auto min = get_number(s, "minimum", ptr);
    const auto max = get_number(s, "maximum", ptr);
    const auto xmin = get_number(s, "exclusiveMinimum", ptr);
    const auto xmax = get_number(s, "exclusiveMaximum", ptr);
    if (!status_.is_ok()) return "";
    if (!min && !max && !xmin && !xmax) return primitive(integer ? "integer" : "number");
    const double limit = static_cast<double>(kMaxIntegerMagnitude);
    double lo = -limit, hi = limit;
    if (min) lo = std::max(lo, std::ceil(*min));
    if (xmin) lo = std::max(lo, std::floor(*xmin) + 1);
    if (max) hi = std::min(hi, std::floor(*max));
    if (xmax) hi = std::min(hi, std::ceil(*xmax) - 1);
    lo = std::max(lo, -limit);
    hi = std::min(hi, limit);
    if (lo > hi) {
      fail(ptr, integer
                    ? "no integer lies between the minimum and the maximum"
                    : "no integer lies between the minimum and the maximum (bounds are rounded to integers)");
      return "";
    }
    const auto a = static_cast<int64_t>(lo), b = static_cast<int64_t>(hi);
    const std::string body =
        integer ? integer_range_gbnf(a, b) : number_range_gbnf(a, b, primitive("decimal-part"));
    return add_rule(hint, body + " space");
  }

  const Json& root_;
  Status status_;
  std::map<std::string, std::string> rules_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> refs_;  // JSON pointer -> rule name
};

}  // namespace

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema) {
  return json_schema_to_gbnf(schema, "", "");
}

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema, const std::string& prefix,
                                        const std::string& suffix) {
  Result<std::string> converted = invalid_argument("schema: not converted");
  try {
    converted = Converter(schema).run(prefix, suffix);
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument(std::string("schema: ") + e.what());
  }
  PADDOCK_ASSIGN(std::string gbnf, std::move(converted));
  // A schema that recurses without passing through an object or array (e.g. a $ref to
  // itself) yields a left-recursive grammar: report it as the schema's error.
  auto parsed = parse_gbnf(gbnf);
  if (!parsed.ok())
    return invalid_argument("schema: unsupported recursion or size: " + parsed.status().message());
  return gbnf;
}

Result<std::string> json_schema_to_gbnf(std::string_view schema_json) {
  Json schema = Json::parse(schema_json, nullptr, false);
  if (schema.is_discarded()) return invalid_argument("schema: expected valid JSON");
  return json_schema_to_gbnf(schema);
}

std::string json_object_gbnf() {
  return R"(root ::= object
value ::= object | array | string | number | boolean | null
object ::= "{" space ( string ":" space value ("," space string ":" space value)* )? "}" space
array ::= "[" space ( value ("," space value)* )? "]" space
string ::= "\"" char* "\"" space
char ::= [^"\\\x7F\x00-\x1F\uD800-\uDFFF] | [\\] (["\\/bfnrt] | "u" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}))
number ::= ("-"? integral-part) ("." decimal-part)? ([eE] [-+]? [0-9]{1,2})? space
integral-part ::= [0] | [1-9] [0-9]{0,15}
decimal-part ::= [0-9]{1,16}
boolean ::= ("true" | "false") space
null ::= "null" space
space ::= | " " | "\n" [ \t]{0,20}
)";
}

Result<std::string> format_to_gbnf(std::string_view format_json) {
  if (format_json.empty()) return std::string();
  Json f = Json::parse(format_json, nullptr, false);
  if (f.is_discarded())
    return invalid_argument("invalid format: expected \"json\" or a valid JSON Schema object");
  if (f.is_null() || (f.is_string() && f.get<std::string>().empty())) return std::string();
  if (f.is_string() && f.get<std::string>() == "json") return json_object_gbnf();
  if (!f.is_object()) {
    return invalid_argument("invalid format: " + f.dump() +
                            "; expected \"json\" or a valid JSON Schema object");
  }
  return json_schema_to_gbnf(f);
}

}  // namespace paddock::sample
