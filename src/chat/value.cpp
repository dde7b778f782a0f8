#include "chat/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "chat/utf8.h"

namespace paddock::chat {

namespace {

const std::string kEmptyString;
const std::vector<Value> kEmptyList;
const std::vector<Field> kEmptyFields;

// Shortest round-trip digits of |f|: value = 0.DIGITS * 10^dp.
void shortest_digits(double f, std::string* digits, int* dp) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), std::fabs(f), std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));
  const size_t e = s.find('e');
  digits->clear();
  for (char c : s.substr(0, e))
    if (c != '.') digits->push_back(c);
  int exp = 0;
  std::from_chars(s.data() + e + 1 + (s[e + 1] == '+' ? 1 : 0), s.data() + s.size(), exp);
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
  *dp = exp + 1;
}

std::string format_exp(const std::string& digits, int dp, bool neg) {
  std::string out = neg ? "-" : "";
  out += digits[0];
  if (digits.size() > 1) {
    out.push_back('.');
    out.append(digits, 1, std::string::npos);
  }
  const int exp = digits == "0" ? 0 : dp - 1;
  out += exp < 0 ? "e-" : "e+";
  if (std::abs(exp) < 10) out.push_back('0');
  out.append(std::to_string(std::abs(exp)));
  return out;
}

std::string format_fixed(const std::string& digits, int dp, bool neg) {
  std::string out = neg ? "-" : "";
  if (digits == "0") return out + "0";
  if (dp <= 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-dp), '0');
    out.append(digits);
  } else if (static_cast<size_t>(dp) >= digits.size()) {
    out.append(digits);
    out.append(static_cast<size_t>(dp) - digits.size(), '0');
  } else {
    out.append(digits, 0, static_cast<size_t>(dp));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(dp), std::string::npos);
  }
  return out;
}

void json_string(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const int32_t r = decode_utf8(s, &i);
    if (r == kRuneError) {
      *out += "\\ufffd";
      continue;
    }
    switch (r) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '<':
      case '>':
      case '&':
      case 0x2028:
      case 0x2029:
        *out += "\\u";
        *out += kHex[(r >> 12) & 0xF];
        *out += kHex[(r >> 8) & 0xF];
        *out += kHex[(r >> 4) & 0xF];
        *out += kHex[r & 0xF];
        break;
      default:
        if (r < 0x20) {
          *out += "\\u00";
          *out += kHex[r >> 4];
          *out += kHex[r & 0xF];
        } else {
          out->append(s.substr(start, i - start));
        }
    }
  }
  out->push_back('"');
}

std::string json_float(double f) {
  if (!std::isfinite(f)) return "null";
  const double a = std::fabs(f);
  if (a != 0 && (a < 1e-6 || a >= 1e21)) {
    std::string s = go_format_float(f, 'e', -1);
    // Go's encoder writes e-7, not e-07.
    const size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
    return s;
  }
  return go_format_float(f, 'f', -1);
}

void marshal(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Value::Kind::kInvalid: *out += "null"; return;
    case Value::Kind::kBool: *out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: *out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: *out += json_float(v.as_float()); return;
    case Value::Kind::kString: json_string(v.as_string(), out); return;
    case Value::Kind::kList: {
      if (v.printer() == Value::Printer::kPropertyType && v.items().size() == 1) {
        marshal(v.items()[0], out);
        return;
      }
      out->push_back('[');
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out->push_back(',');
        first = false;
        marshal(item, out);
      }
      out->push_back(']');
      return;
    }
    case Value::Kind::kObject: {
      out->push_back('{');
      bool first = true;
      for (const Field& f : v.fields()) {
        if (v.flavor() == Value::Flavor::kStruct && f.omit_empty && f.value->is_empty_for_json()) continue;
        if (!first) out->push_back(',');
        first = false;
        json_string(f.json_name, out);
        out->push_back(':');
        marshal(*f.value, out);
      }
      out->push_back('}');
      return;
    }
  }
}

void print(const Value& v, bool top, std::string* out) {
  if (v.printer() == Value::Printer::kJson && v.is_valid()) {
    marshal(v, out);
    return;
  }
  switch (v.kind()) {
    case Value::Kind::kInvalid: *out += top ? "<no value>" : "<nil>"; return;
    case Value::Kind::kBool: *out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: *out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: *out += go_format_float(v.as_float(), 'g', -1); return;
    case Value::Kind::kString: *out += v.as_string(); return;
    case Value::Kind::kList: {
      if (v.printer() == Value::Printer::kPropertyType && v.items().size() <= 1) {
        if (!v.items().empty()) print(v.items()[0], false, out);
        return;
      }
      out->push_back('[');
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out->push_back(' ');
        first = false;
        print(item, false, out);
      }
      out->push_back(']');
      return;
    }
    case Value::Kind::kObject: {
      const bool is_struct = v.flavor() == Value::Flavor::kStruct;
      *out += is_struct ? "{" : "map[";
      bool first = true;
      for (const Field& f : v.fields()) {
        if (!first) out->push_back(' ');
        first = false;
        if (!is_struct) *out += f.name + ":";
        print(*f.value, false, out);
      }
      out->push_back(is_struct ? '}' : ']');
      return;
    }
  }
}

}  // namespace

Value::Value(std::string s) : kind_(Kind::kString), s_(std::make_shared<const std::string>(std::move(s))) {}

Value Value::list(std::vector<Value> items, Printer printer) {
  Value v;
  v.kind_ = Kind::kList;
  v.printer_ = printer;
  v.list_ = std::make_shared<const std::vector<Value>>(std::move(items));
  return v;
}

Value Value::object(Flavor flavor, std::vector<Field> fields, std::string type_name, Printer printer) {
  if (flavor == Flavor::kGoMap) {
    std::stable_sort(fields.begin(), fields.end(),
                     [](const Field& a, const Field& b) { return a.name < b.name; });
    std::vector<Field> unique;
    for (Field& f : fields) {
      if (!unique.empty() && unique.back().name == f.name) {
        unique.back() = std::move(f);
      } else {
        unique.push_back(std::move(f));
      }
    }
    fields = std::move(unique);
  }
  Value v;
  v.kind_ = Kind::kObject;
  v.printer_ = printer;
  v.obj_ = std::make_shared<const Object>(Object{flavor, std::move(type_name), std::move(fields)});
  return v;
}

Value Value::from_json(const nlohmann::ordered_json& j, bool ordered_objects) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& e : j) items.push_back(from_json(e));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<Field> fields;
      for (const auto& [k, e] : j.items()) fields.push_back(field(k, k, from_json(e)));
      return object(ordered_objects ? Flavor::kOrderedMap : Flavor::kGoMap, std::move(fields),
                    "map[string]interface {}");
    }
    default: return Value();
  }
}

const std::string& Value::as_string() const { return s_ ? *s_ : kEmptyString; }
const std::vector<Value>& Value::items() const { return list_ ? *list_ : kEmptyList; }
const std::vector<Field>& Value::fields() const { return obj_ ? obj_->fields : kEmptyFields; }
Value::Flavor Value::flavor() const { return obj_ ? obj_->flavor : Flavor::kGoMap; }
const std::string& Value::type_name() const { return obj_ ? obj_->type_name : kEmptyString; }

const Value* Value::find(std::string_view name) const {
  for (const Field& f : fields())
    if (f.name == name) return f.value.get();
  return nullptr;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kInvalid: return false;
    case Kind::kBool: return b_;
    case Kind::kInt: return i_ != 0;
    case Kind::kFloat: return f_ != 0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return !items().empty();
    case Kind::kObject: return flavor() == Flavor::kStruct || !fields().empty();
  }
  return false;
}

bool Value::is_empty_for_json() const {
  if (kind_ == Kind::kObject && flavor() == Flavor::kStruct) return false;
  return !truthy();
}

std::string Value::go_type() const {
  switch (kind_) {
    case Kind::kInvalid: return "<nil>";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float64";
    case Kind::kString: return "string";
    case Kind::kList: return "[]interface {}";
    case Kind::kObject: return type_name().empty() ? "map[string]interface {}" : type_name();
  }
  return "?";
}

Field field(std::string name, std::string json_name, Value v, bool omit_empty) {
  return Field{std::move(name), std::move(json_name), omit_empty,
               std::make_shared<const Value>(std::move(v))};
}

std::string go_print(const Value& v) {
  std::string out;
  print(v, true, &out);
  return out;
}

std::string go_json(const Value& v) {
  std::string out;
  marshal(v, &out);
  return out;
}

std::string go_quote(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const int32_t r = decode_utf8(s, &i);
    if (r == kRuneError) {
      out += "\\x";
      out += kHex[static_cast<unsigned char>(s[start]) >> 4];
      out += kHex[static_cast<unsigned char>(s[start]) & 0xF];
      continue;
    }
    switch (r) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      default:
        if (r < 0x20 || r == 0x7F) {
          out += "\\x";
          out += kHex[r >> 4];
          out += kHex[r & 0xF];
        } else {
          out.append(s.substr(start, i - start));
        }
    }
  }
  return out + "\"";
}

std::string go_format_float(double f, char fmt, int prec) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "+Inf" : "-Inf";
  const bool neg = std::signbit(f);
  if (prec >= 0) {
    char buf[512];
    const int p = std::min(prec, 300);
    if (fmt == 'g') {
      std::snprintf(buf, sizeof(buf), "%.*g", p == 0 ? 1 : p, f);
    } else {
      std::snprintf(buf, sizeof(buf), fmt == 'e' ? "%.*e" : "%.*f", p, f);
    }
    return buf;
  }
  std::string digits;
  int dp = 0;
  shortest_digits(f, &digits, &dp);
  if (fmt == 'e') return format_exp(digits, dp, neg);
  if (fmt == 'f') return format_fixed(digits, dp, neg);
  const int exp = dp - 1;
  // Shortest %g switches to an exponent outside [1e-4, 1e6), as strconv does.
  if (digits != "0" && (exp < -4 || exp >= 6)) return format_exp(digits, dp, neg);
  return format_fixed(digits, dp, neg);
}

}  // namespace paddock::chat
