// The dynamic value type of the Jinja engine, with Python's semantics where templates can
// see them: truthiness, equality (1 == 1.0 == True), str() and repr() printing
// (True/None, ['a', 1], {'a': 1}, float repr), insertion-ordered dicts.
// Invariants: lists and dicts are shared by reference like Python objects, but the sandbox
// never hands out a method that mutates them; only namespaces are mutable.
//   Value v = Value::from_json(json); std::string s = v.str();
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace paddock::jinja {

class Value;
class Interpreter;

// Positional and keyword arguments of a call, in source order.
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Containers nest at most this deep, so printing, comparing and freeing them cannot
// overflow the stack (TemplateError kLimit when a template tries).
inline constexpr int kMaxValueDepth = 400;

struct ListData {
  std::vector<Value> items;
  bool tuple = false;      // prints as (a, b)
  bool generator = false;  // the lazy result of map/select/...: no len(), no tojson
  int depth = 1;
};

struct DictData {
  std::vector<std::pair<Value, Value>> items;  // insertion order, keys unique
  const Value* find(const Value& key) const;
  void set(const Value& key, Value value);
  int depth = 1;
};

using NativeFn = std::function<Value(Interpreter&, Args&)>;

struct CallableData {
  std::string name;
  NativeFn fn;
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable, kNamespace };

  Value() = default;  // undefined
  static Value undefined(std::string hint) {
    Value v;
    v.str_ = std::make_shared<const std::string>(std::move(hint));
    return v;
  }
  static Value none() { return Value(Kind::kNone); }
  Value(bool b) : kind_(Kind::kBool), int_(b) {}       // NOLINT
  Value(int64_t i) : kind_(Kind::kInt), int_(i) {}     // NOLINT
  Value(int i) : kind_(Kind::kInt), int_(i) {}         // NOLINT
  Value(double d) : kind_(Kind::kFloat), float_(d) {}  // NOLINT
  Value(std::string s)
      : kind_(Kind::kString), str_(std::make_shared<const std::string>(std::move(s))) {}  // NOLINT
  Value(const char* s) : Value(std::string(s)) {}                                         // NOLINT
  // A str marked safe (jinja2's Markup, from `|safe` or `|escape`): `+` with a plain str
  // HTML-escapes the plain side, as Markup.__add__ does.
  static Value markup(std::string s) {
    Value v(std::move(s));
    v.markup_ = true;
    return v;
  }
  static Value list(std::vector<Value> items, bool tuple = false, bool generator = false);
  static Value dict(std::shared_ptr<DictData> d);
  static Value dict();
  static Value callable(std::string name, NativeFn fn);
  static Value namespace_(std::shared_ptr<DictData> attrs);
  // JSON objects keep their order: use ordered_json where key order matters (tojson output).
  static Value from_json(const nlohmann::ordered_json& j);
  static Value from_json(const nlohmann::json& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_markup() const { return markup_; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }  // also for bool
  double as_double() const { return kind_ == Kind::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& as_string() const { return str_ ? *str_ : empty_string(); }
  const std::string& undefined_hint() const { return as_string(); }
  const ListData& as_list() const { return *list_; }
  const DictData& as_dict() const { return *dict_; }
  DictData& namespace_attrs() const { return *dict_; }
  const CallableData& as_callable() const { return *callable_; }

  bool truthy() const;
  int depth() const;  // 0 for scalars
  // Python's str(): what {{ v }} prints (undefined prints nothing). Printing a container
  // larger than max_bytes throws TemplateError(kLimit) instead of allocating it.
  std::string str(size_t max_bytes = kDefaultMaxPrint) const;
  // Python's repr(): how values print inside lists and dicts.
  std::string repr(size_t max_bytes = kDefaultMaxPrint) const;
  static constexpr size_t kDefaultMaxPrint = 16u << 20;
  // jinja2's type names for error messages: 'dict object', 'str object', ...
  std::string type_name() const;

 private:
  explicit Value(Kind k) : kind_(k) {}
  static const std::string& empty_string();
  void repr_into(std::string& out, size_t max_bytes) const;
  Kind kind_ = Kind::kUndefined;
  bool markup_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::shared_ptr<const std::string> str_;  // shared: copies of big strings stay cheap
  std::shared_ptr<ListData> list_;
  std::shared_ptr<DictData> dict_;
  std::shared_ptr<CallableData> callable_;
};

bool values_equal(const Value& a, const Value& b);
// Python's float repr: shortest round-trip digits, 1e+16 / 0.0001 / 1.5 style.
std::string python_float_repr(double d);
// Python's repr() of a str: quotes chosen like Python, escapes \n, \\, control bytes.
std::string python_string_repr(const std::string& s);

}  // namespace paddock::jinja
