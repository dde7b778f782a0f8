// Operators, subscripts, slices and iteration with Python's semantics.
#include <cmath>
#include <limits>
#include <optional>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/utf8.h"

namespace paddock::jinja {
namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) throw_undefined(a);
  if (b.is_undefined()) throw_undefined(b);
  if (op == "+" && a.is_string())
    throw TemplateError(ErrorKind::kType,
                        std::string("can only concatenate str (not \"") + b.type_name() + "\") to str");
  throw TemplateError(ErrorKind::kType, "unsupported operand type(s) for " + op + std::string(": '") +
                                            a.type_name() + "' and '" + b.type_name() + "'");
}

// Python ints are unbounded; ours stop with an error instead of wrapping.
int64_t checked(char op, int64_t a, int64_t b) {
  int64_t r = 0;
  const bool overflow = op == '+'   ? __builtin_add_overflow(a, b, &r)
                        : op == '-' ? __builtin_sub_overflow(a, b, &r)
                                    : __builtin_mul_overflow(a, b, &r);
  if (overflow) throw TemplateError(ErrorKind::kLimit, "integer overflow");
  return r;
}

double float_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

std::string percent_format(Interpreter& in, const std::string& fmt, const Value& args) {
  std::vector<Value> vals =
      args.is_list() && args.as_list().tuple ? args.as_list().items : std::vector<Value>{args};
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) throw TemplateError(ErrorKind::kType, "incomplete format");
    const char c = fmt[i];
    if (c == '%') {
      out += '%';
      continue;
    }
    if (next >= vals.size()) throw TemplateError(ErrorKind::kType, "not enough arguments for format string");
    const Value& v = vals[next++];
    if (c == 's') {
      out += v.str();
    } else if (c == 'r') {
      out += v.repr();
    } else if (c == 'd' || c == 'i') {
      if (!v.is_number()) throw TemplateError(ErrorKind::kType, "%d format: a real number is required");
      out += std::to_string(v.is_float() ? static_cast<int64_t>(v.as_double()) : v.as_int());
    } else {
      throw TemplateError(ErrorKind::kType, std::string("unsupported format character '") + c + "'");
    }
    in.check_size(out.size());
  }
  if (next < vals.size())
    throw TemplateError(ErrorKind::kType, "not all arguments converted during string formatting");
  return out;
}

Value repeat(Interpreter& in, const Value& seq, int64_t n) {
  // An empty sequence stays empty however large n is (and must not loop n times).
  const bool empty = seq.is_string() ? seq.as_string().empty() : seq.as_list().items.empty();
  if (n <= 0 || empty) return seq.is_string() ? Value(std::string()) : Value::list({});
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty() && static_cast<uint64_t>(n) > in.limits().max_output_bytes / s.size() + 1)
      in.check_size(in.limits().max_output_bytes + 1);
    in.check_size(s.size() * static_cast<size_t>(n));
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += s;
    return Value(std::move(out));
  }
  const auto& items = seq.as_list().items;
  if (!items.empty() && static_cast<uint64_t>(n) > in.limits().max_items / items.size() + 1)
    return in.make_list(std::vector<Value>(in.limits().max_items + 1));
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return in.make_list(std::move(out));
}

int compare_values(const Value& a, const Value& b, const std::string& op) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float())
      return a.as_double() < b.as_double() ? -1 : (a.as_double() > b.as_double() ? 1 : 0);
    return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
  }
  if (a.is_string() && b.is_string())
    return a.as_string().compare(b.as_string()) < 0 ? -1 : (a.as_string() == b.as_string() ? 0 : 1);
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (values_equal(x[i], y[i])) continue;
      return compare_values(x[i], y[i], op);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  if (a.is_undefined()) throw_undefined(a);
  if (b.is_undefined()) throw_undefined(b);
  throw TemplateError(ErrorKind::kType, std::string("'") + op +
                                            std::string("' not supported between instances of '") +
                                            a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace

int python_compare(const Value& a, const Value& b) { return compare_values(a, b, "<"); }

size_t py_len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString:
      return is_ascii(v.as_string()) ? v.as_string().size() : utf8_offsets(v.as_string()).size() - 1;
    case Value::Kind::kList:
      if (v.as_list().generator)
        throw TemplateError(ErrorKind::kType, "object of type 'generator' has no len()");
      return v.as_list().items.size();
    case Value::Kind::kDict: return v.as_dict().items.size();
    case Value::Kind::kNamespace: return v.namespace_attrs().items.size();
    default:
      throw TemplateError(ErrorKind::kType,
                          std::string("object of type '") + v.type_name() + "' has no len()");
  }
}

Value Interpreter::eval_binary(const std::string& op, const Value& a, const Value& b, int line) {
  (void)line;
  if (op == "~") return make_string(a.str(limits_.max_output_bytes) + b.str(limits_.max_output_bytes));
  if (op == "%" && a.is_string()) return make_string(percent_format(*this, a.as_string(), b));
  if (op == "*" && (a.is_string() || a.is_list()) && (b.is_int() || b.is_bool()))
    return repeat(*this, a, b.as_int());
  if (op == "*" && (b.is_string() || b.is_list()) && (a.is_int() || a.is_bool()))
    return repeat(*this, b, a.as_int());
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      check_size(a.as_string().size() + b.as_string().size());
      if (a.is_markup() || b.is_markup()) {
        const std::string l = a.is_markup() ? a.as_string() : html_escape(a.as_string());
        return Value::markup(l + (b.is_markup() ? b.as_string() : html_escape(b.as_string())));
      }
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list() && !a.as_list().generator && !b.as_list().generator &&
        a.as_list().tuple == b.as_list().tuple) {
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      if (items.size() > limits_.max_items) return make_list(std::move(items));
      return Value::list(std::move(items), a.as_list().tuple);
    }
  }
  if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
  const bool ints = !a.is_float() && !b.is_float();
  if (op == "+") {
    if (ints) return Value(checked('+', a.as_int(), b.as_int()));
    return Value(a.as_double() + b.as_double());
  }
  if (op == "-") {
    if (ints) return Value(checked('-', a.as_int(), b.as_int()));
    return Value(a.as_double() - b.as_double());
  }
  if (op == "*") {
    if (ints) return Value(checked('*', a.as_int(), b.as_int()));
    return Value(a.as_double() * b.as_double());
  }
  if (op == "/") {
    if (b.as_double() == 0) throw TemplateError(ErrorKind::kType, "division by zero");
    return Value(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (b.as_double() == 0) throw TemplateError(ErrorKind::kType, "integer division or modulo by zero");
    if (ints) {
      const int64_t x = a.as_int(), y = b.as_int();
      if (x == std::numeric_limits<int64_t>::min() && y == -1)
        throw TemplateError(ErrorKind::kLimit, "integer overflow");
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value(op == "//" ? q : m);
    }
    if (op == "%") return Value(float_mod(a.as_double(), b.as_double()));
    return Value(std::floor(a.as_double() / b.as_double()));
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) {
      int64_t result = 1, base = a.as_int(), e = b.as_int();
      while (e > 0) {
        if (e & 1) result = checked('*', result, base);
        e >>= 1;
        if (e > 0) base = checked('*', base, base);
      }
      return Value(result);
    }
    return Value(std::pow(a.as_double(), b.as_double()));
  }
  unsupported(op, a, b);
}

bool Interpreter::eval_compare(const std::string& op, const Value& a, const Value& b, int line) {
  (void)line;
  if (op == "==") return values_equal(a, b);
  if (op == "!=") return !values_equal(a, b);
  if (op == "in" || op == "notin") {
    bool found = false;
    if (b.is_string()) {
      if (!a.is_string()) {
        if (a.is_undefined()) throw_undefined(a);
        throw TemplateError(
            ErrorKind::kType,
            std::string("'in <string>' requires string as left operand, not ") + a.type_name());
      }
      found = b.as_string().find(a.as_string()) != std::string::npos;
    } else if (b.is_dict()) {
      found = b.as_dict().find(a) != nullptr;
    } else if (b.is_list()) {
      for (const auto& item : b.as_list().items) found = found || values_equal(item, a);
    } else if (!b.is_undefined()) {
      throw TemplateError(ErrorKind::kType,
                          std::string("argument of type '") + b.type_name() + "' is not iterable");
    }
    return op == "in" ? found : !found;
  }
  const int c = compare_values(a, b, op);
  if (op == "<") return c < 0;
  if (op == ">") return c > 0;
  if (op == "<=") return c <= 0;
  return c >= 0;
}

std::vector<Value> Interpreter::iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: return v.as_list().items;
    case Value::Kind::kDict: {
      std::vector<Value> keys;
      keys.reserve(v.as_dict().items.size());
      for (const auto& kv : v.as_dict().items) keys.push_back(kv.first);
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<Value> chars;
      const std::string& s = v.as_string();
      const auto offs = utf8_offsets(s);
      for (size_t i = 0; i + 1 < offs.size(); ++i)
        chars.emplace_back(s.substr(offs[i], offs[i + 1] - offs[i]));
      return chars;
    }
    default:
      throw TemplateError(ErrorKind::kType, std::string("'") + v.type_name() + "' object is not iterable");
  }
}

Value Interpreter::get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) throw_undefined(obj);
  if (obj.is_dict()) {
    if (const Value* v = obj.as_dict().find(key)) return *v;
    if (key.is_string()) return get_attr(obj, key.as_string());
    return Value::undefined(std::string("'dict object' has no element ") + key.repr());
  }
  if ((obj.is_list() && !obj.as_list().generator) || obj.is_string()) {
    if (!key.is_int() && !key.is_bool()) {
      if (key.is_string()) return get_attr(obj, key.as_string());
      return Value::undefined(std::string("'") + obj.type_name() + std::string(" object' has no element ") +
                              key.repr());
    }
    int64_t i = key.as_int();
    if (obj.is_list()) {
      const auto n = static_cast<int64_t>(obj.as_list().items.size());
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        return Value::undefined(std::string("'") + obj.type_name() + std::string(" object' has no element ") +
                                key.repr());
      return obj.as_list().items[static_cast<size_t>(i)];
    }
    const std::string& s = obj.as_string();
    const auto offs = utf8_offsets(s);
    const auto n = static_cast<int64_t>(offs.size()) - 1;
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::undefined(std::string("'str object' has no element ") + key.repr());
    return Value(s.substr(offs[static_cast<size_t>(i)],
                          offs[static_cast<size_t>(i) + 1] - offs[static_cast<size_t>(i)]));
  }
  if (key.is_string()) return get_attr(obj, key.as_string());
  return Value::undefined(std::string("'") + obj.type_name() + std::string(" object' has no element ") +
                          key.repr());
}

Value Interpreter::eval_slice(const Value& obj, const Value& start_v, const Value& stop_v,
                              const Value& step_v) {
  if (obj.is_undefined()) throw_undefined(obj);
  if (!obj.is_string() && !(obj.is_list() && !obj.as_list().generator))
    throw TemplateError(ErrorKind::kType,
                        std::string("'") + obj.type_name() + "' object is not subscriptable");
  auto get = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool())
      throw TemplateError(ErrorKind::kType, std::string("slice ") + what + " must be an integer or None");
    return v.as_int();
  };
  const auto step_o = get(step_v, "step");
  const int64_t step = step_o.value_or(1);
  if (step == 0) throw TemplateError(ErrorKind::kType, "slice step cannot be zero");
  std::vector<size_t> offs;
  int64_t n = 0;
  if (obj.is_string()) {
    offs = utf8_offsets(obj.as_string());
    n = static_cast<int64_t>(offs.size()) - 1;
  } else {
    n = static_cast<int64_t>(obj.as_list().items.size());
  }
  // Python's PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t def_pos, int64_t def_neg) {
    if (!v) return step > 0 ? def_pos : def_neg;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  const int64_t start = adjust(get(start_v, "start"), 0, n - 1);
  const int64_t stop = adjust(get(stop_v, "stop"), n, -1);
  std::vector<int64_t> idx;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) idx.push_back(i);
  if (obj.is_string()) {
    std::string out;
    for (const int64_t i : idx)
      out += obj.as_string().substr(offs[static_cast<size_t>(i)],
                                    offs[static_cast<size_t>(i) + 1] - offs[static_cast<size_t>(i)]);
    return Value(std::move(out));
  }
  std::vector<Value> out;
  out.reserve(idx.size());
  for (const int64_t i : idx) out.push_back(obj.as_list().items[static_cast<size_t>(i)]);
  return Value::list(std::move(out), obj.as_list().tuple);
}

}  // namespace paddock::jinja
