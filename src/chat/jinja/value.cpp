#include "chat/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja/error.h"

namespace paddock::jinja {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::kSyntax: return "TemplateSyntaxError";
    case ErrorKind::kUndefined: return "UndefinedError";
    case ErrorKind::kType: return "TypeError";
    case ErrorKind::kSecurity: return "SecurityError";
    case ErrorKind::kRaised: return "TemplateError";
    case ErrorKind::kLimit: return "LimitExceeded";
  }
  return "TemplateError";
}

const Value* DictData::find(const Value& key) const {
  for (const auto& [k, v] : items)
    if (values_equal(k, key)) return &v;
  return nullptr;
}

namespace {

int checked_depth(int child_depth) {
  if (child_depth + 1 > kMaxValueDepth)
    throw TemplateError(ErrorKind::kLimit,
                        std::string("values nested deeper than ") + std::to_string(kMaxValueDepth));
  return child_depth + 1;
}

}  // namespace

int Value::depth() const {
  if (kind_ == Kind::kList) return list_->depth;
  if (kind_ == Kind::kDict) return dict_->depth;
  return 0;
}

void DictData::set(const Value& key, Value value) {
  depth = std::max(depth, checked_depth(std::max(key.depth(), value.depth())));
  for (auto& [k, v] : items) {
    if (values_equal(k, key)) {
      v = std::move(value);
      return;
    }
  }
  items.emplace_back(key, std::move(value));
}

Value Value::list(std::vector<Value> items, bool tuple, bool generator) {
  int d = 0;
  for (const auto& item : items) d = std::max(d, item.depth());
  Value v(Kind::kList);
  v.list_ = std::make_shared<ListData>(ListData{std::move(items), tuple, generator, checked_depth(d)});
  return v;
}

Value Value::dict(std::shared_ptr<DictData> d) {
  int depth = 0;
  for (const auto& [k, x] : d->items) depth = std::max(depth, std::max(k.depth(), x.depth()));
  d->depth = checked_depth(depth);
  Value v(Kind::kDict);
  v.dict_ = std::move(d);
  return v;
}

Value Value::dict() { return dict(std::make_shared<DictData>()); }

Value Value::callable(std::string name, NativeFn fn) {
  Value v(Kind::kCallable);
  v.callable_ = std::make_shared<CallableData>(CallableData{std::move(name), std::move(fn)});
  return v;
}

Value Value::namespace_(std::shared_ptr<DictData> attrs) {
  Value v(Kind::kNamespace);
  v.dict_ = std::move(attrs);
  return v;
}

namespace {

template <typename Json>
Value value_from_json(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.template get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value(j.template get<double>());
    case nlohmann::json::value_t::string: return Value(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(value_from_json(e));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      auto d = std::make_shared<DictData>();
      d->items.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        d->items.emplace_back(Value(it.key()), value_from_json(it.value()));
      return Value::dict(std::move(d));
    }
    default: return Value::none();
  }
}

}  // namespace

Value Value::from_json(const nlohmann::ordered_json& j) { return value_from_json(j); }
Value Value::from_json(const nlohmann::json& j) { return value_from_json(j); }

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool:
    case Kind::kInt: return int_ != 0;
    case Kind::kFloat: return float_ != 0.0;
    case Kind::kString: return !str_->empty();
    case Kind::kList: return list_->generator || !list_->items.empty();
    case Kind::kDict: return !dict_->items.empty();
    case Kind::kCallable:
    case Kind::kNamespace: return true;
  }
  return false;
}

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  // sci looks like "-1.2345e+02": split into sign, digits and exponent.
  std::string sign;
  size_t pos = 0;
  if (sci[0] == '-') {
    sign = "-";
    pos = 1;
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = pos; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int exp = std::atoi(sci.c_str() + e + 1);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exp < -4 || exp >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += std::string(".") + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof(eb), "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + eb;
  }
  std::string out = sign;
  if (exp < 0) {
    out += std::string("0.") + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out += digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, static_cast<size_t>(exp) + 1) + std::string(".") +
           digits.substr(static_cast<size_t>(exp) + 1);
  }
  return out;
}

std::string python_string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == quote || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\x%02x", c);
      out += b;
    } else {
      out += ch;
    }
  }
  out += quote;
  return out;
}

namespace {

[[noreturn]] void throw_print_limit(size_t max_bytes) {
  throw TemplateError(ErrorKind::kLimit,
                      std::string("printed value exceeds ") + std::to_string(max_bytes) + " bytes");
}

}  // namespace

const std::string& Value::empty_string() {
  static const std::string kEmpty;
  return kEmpty;
}

std::string Value::str(size_t max_bytes) const {
  switch (kind_) {
    case Kind::kUndefined: return "";
    case Kind::kString: return *str_;
    default: return repr(max_bytes);
  }
}

std::string Value::repr(size_t max_bytes) const {
  std::string out;
  repr_into(out, max_bytes);
  return out;
}

void Value::repr_into(std::string& out, size_t max_bytes) const {
  if (out.size() > max_bytes) throw_print_limit(max_bytes);
  switch (kind_) {
    case Kind::kUndefined: return;
    case Kind::kNone: out += "None"; return;
    case Kind::kBool: out += int_ ? "True" : "False"; return;
    case Kind::kInt: out += std::to_string(int_); return;
    case Kind::kFloat: out += python_float_repr(float_); return;
    case Kind::kString:
      if (out.size() + str_->size() > max_bytes) throw_print_limit(max_bytes);
      out += python_string_repr(*str_);
      return;
    case Kind::kList: {
      if (list_->generator) {
        out += "<generator object>";
        return;
      }
      out += list_->tuple ? "(" : "[";
      for (size_t i = 0; i < list_->items.size(); ++i) {
        if (i) out += ", ";
        list_->items[i].repr_into(out, max_bytes);
      }
      if (list_->tuple && list_->items.size() == 1) out += ",";
      out += list_->tuple ? ")" : "]";
      return;
    }
    case Kind::kDict:
      out += "{";
      for (size_t i = 0; i < dict_->items.size(); ++i) {
        if (i) out += ", ";
        dict_->items[i].first.repr_into(out, max_bytes);
        out += ": ";
        dict_->items[i].second.repr_into(out, max_bytes);
      }
      out += "}";
      return;
    case Kind::kCallable: out += "<function " + callable_->name + ">"; return;
    case Kind::kNamespace: out += "<Namespace>"; return;
  }
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return list_->generator ? "generator" : (list_->tuple ? "tuple" : "list");
    case Kind::kDict: return "dict";
    case Kind::kCallable: return "function";
    case Kind::kNamespace: return "Namespace";
  }
  return "object";
}

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const auto& x = a.as_list().items;
      const auto& y = b.as_list().items;
      if (x.size() != y.size() || a.as_list().tuple != b.as_list().tuple) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!values_equal(x[i], y[i])) return false;
      return true;
    }
    case Value::Kind::kDict: {
      const auto& x = a.as_dict().items;
      if (x.size() != b.as_dict().items.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* other = b.as_dict().find(k);
        if (!other || !values_equal(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kCallable: return &a.as_callable() == &b.as_callable();
    case Value::Kind::kNamespace: return &a.namespace_attrs() == &b.namespace_attrs();
    default: return false;
  }
}

}  // namespace paddock::jinja
