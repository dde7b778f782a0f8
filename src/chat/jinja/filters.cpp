// jinja2's builtin filters and tests, with Python's semantics for the values they see.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/utf8.h"

namespace paddock::jinja {

Value arg(const Args& a, size_t pos, const char* name, const Value& def) {
  for (const auto& [k, v] : a.keyword)
    if (k == name) return v;
  return pos < a.positional.size() ? a.positional[pos] : def;
}

int64_t arg_int(const Args& a, size_t pos, const char* name, int64_t def) {
  const Value v = arg(a, pos, name);
  if (v.is_undefined() || v.is_none()) return def;
  if (!v.is_int() && !v.is_bool())
    throw TemplateError(ErrorKind::kType, std::string("argument '") + name +
                                              std::string("' must be an integer, not ") + v.type_name());
  return v.as_int();
}

const std::string& expect_string(const Value& v, const char* what) {
  if (v.is_undefined()) throw_undefined(v);
  if (!v.is_string())
    throw TemplateError(ErrorKind::kType,
                        std::string(what) + std::string(": expected a string, found ") + v.type_name());
  return v.as_string();
}

std::string py_strip(const std::string& s, const Value& chars, bool left, bool right) {
  auto strip_char = [&](char c) {
    if (chars.is_undefined() || chars.is_none())
      return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    return chars.as_string().find(c) != std::string::npos;
  };
  if (!chars.is_undefined() && !chars.is_none()) expect_string(chars, "strip chars");
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && strip_char(s[b])) ++b;
  if (right)
    while (e > b && strip_char(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string py_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string py_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string py_capitalize(const std::string& s) {
  std::string out = py_lower(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string py_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  std::string out;
  size_t i = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t j = s.find(from, i);
    if (j == std::string::npos) break;
    out.append(s, i, j - i);
    out += to;
    i = j + from.size();
    ++done;
  }
  out.append(s, i, std::string::npos);
  return out;
}

namespace {

// jinja2's make_attrgetter: "a.b.0" walks items/attributes.
Value get_path(Interpreter& in, Value v, const std::string& path) {
  size_t i = 0;
  while (true) {
    const size_t dot = path.find('.', i);
    const std::string part = path.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    v = in.get_item(
        v, digits ? Value(static_cast<int64_t>(std::strtoll(part.c_str(), nullptr, 10))) : Value(part));
    if (dot == std::string::npos) return v;
    i = dot + 1;
  }
}

Value generator(std::vector<Value> items) { return Value::list(std::move(items), false, true); }

// select/reject/selectattr/rejectattr share this: `args` after skipping the attribute.
std::vector<Value> select_items(Interpreter& in, const Value& seq, Args& a, bool with_attr, bool keep) {
  size_t next = 0;
  std::string attr;
  if (with_attr) attr = expect_string(arg(a, next++, "attribute"), "attribute");
  Args test_args;
  std::string test;
  if (next < a.positional.size()) {
    test = expect_string(a.positional[next++], "test name");
    test_args.positional.assign(a.positional.begin() + static_cast<std::ptrdiff_t>(next), a.positional.end());
  }
  std::vector<Value> out;
  if (!seq.truthy()) return out;  // jinja2 skips falsy input (none, undefined) entirely
  for (const auto& item : in.iterate(seq)) {
    const Value probe = with_attr ? get_path(in, item, attr) : item;
    Args copy = test_args;
    const bool hit = test.empty() ? probe.truthy() : in.apply_test(test, probe, copy);
    if (hit == keep) out.push_back(item);
  }
  return out;
}

std::vector<Value> sorted(Interpreter& in, std::vector<Value> items, bool reverse, bool case_sensitive,
                          const std::string& attr) {
  auto key = [&](const Value& v) {
    Value k = attr.empty() ? v : get_path(in, v, attr);
    if (!case_sensitive && k.is_string()) k = Value(py_lower(k.as_string()));
    return k;
  };
  std::vector<std::pair<Value, Value>> keyed;
  keyed.reserve(items.size());
  for (auto& v : items) keyed.emplace_back(key(v), v);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? python_compare(y.first, x.first) < 0 : python_compare(x.first, y.first) < 0;
  });
  std::vector<Value> out;
  out.reserve(keyed.size());
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

std::string indent_lines(const std::string& s_in, const std::string& ind, bool first, bool blank) {
  std::string s = s_in + "\n";
  std::vector<std::string> lines;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && s[j] != '\n' && s[j] != '\r') ++j;
    lines.push_back(s.substr(i, j - i));
    if (j < s.size() && s[j] == '\r' && j + 1 < s.size() && s[j + 1] == '\n') ++j;
    i = j + 1;
  }
  std::string rv;
  if (blank) {
    for (size_t k = 0; k < lines.size(); ++k) rv += (k ? "\n" + ind : "") + lines[k];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t k = 1; k < lines.size(); ++k) rv += "\n" + (lines[k].empty() ? "" : ind + lines[k]);
  }
  return first ? ind + rv : rv;
}

Value to_int(const Value& v, const Value& def) {
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float()) {
    if (!std::isfinite(v.as_double()) || std::fabs(v.as_double()) >= 9.2e18) return def;
    return Value(static_cast<int64_t>(v.as_double()));
  }
  if (v.is_string()) {
    const std::string s = py_strip(v.as_string(), Value(), true, true);
    if (s.empty()) return def;
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) return Value(static_cast<int64_t>(i));
    const double d = std::strtod(s.c_str(), &end);
    if (*end == '\0' && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value(static_cast<int64_t>(d));
  }
  return def;
}

Value to_float(const Value& v, const Value& def) {
  if (v.is_number()) return Value(v.as_double());
  if (v.is_string()) {
    const std::string s = py_strip(v.as_string(), Value(), true, true);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return Value(d);
  }
  return def;
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value Interpreter::apply_filter(const std::string& name, const Value& v, Args& a, int line) {
  (void)line;
  if (name == "safe") return v.is_markup() ? v : Value::markup(v.str(limits_.max_output_bytes));
  if (name == "string") return v.is_string() ? v : Value(v.str(limits_.max_output_bytes));
  if (name == "trim") return Value(py_strip(v.str(), arg(a, 0, "chars"), true, true));
  if (name == "upper") return Value(py_upper(v.str()));
  if (name == "lower") return Value(py_lower(v.str()));
  if (name == "capitalize") return Value(py_capitalize(v.str()));
  if (name == "title") {
    // jinja2 splits words at whitespace and -({[< and upper-cases each word's first char.
    std::string s = v.str(), out;
    bool boundary = true;
    for (const char c : s) {
      const bool sep = std::isspace(static_cast<unsigned char>(c)) || c == '-' || c == '(' || c == '{' ||
                       c == '[' || c == '<';
      out += static_cast<char>(sep ? c
                                   : (boundary ? std::toupper(static_cast<unsigned char>(c))
                                               : std::tolower(static_cast<unsigned char>(c))));
      boundary = sep;
    }
    return Value(out);
  }
  if (name == "length" || name == "count") return Value(static_cast<int64_t>(py_len(v)));
  if (name == "wordcount") {
    int64_t n = 0;
    bool in_word = false;
    for (const char c : v.str()) {
      const bool w =
          std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
      if (w && !in_word) ++n;
      in_word = w;
    }
    return Value(n);
  }
  if (name == "tojson") {
    JsonStyle style;
    style.max_bytes = limits_.max_output_bytes;
    const Value ind = arg(a, 0, "indent");
    if (ind.is_int()) {
      style.indent = static_cast<int>(std::clamp<int64_t>(ind.as_int(), 0, 64));
      style.indent_str = std::string(static_cast<size_t>(style.indent), ' ');
    } else if (ind.is_string()) {
      style.indent = 1;
      style.indent_str = ind.as_string();
    }
    if (style.indent >= 0) style.item_sep = ",";
    style.ensure_ascii = arg(a, 1, "ensure_ascii", Value(false)).truthy();
    const Value seps = arg(a, 2, "separators");
    if (seps.is_list() && seps.as_list().items.size() == 2) {
      style.item_sep = expect_string(seps.as_list().items[0], "separator");
      style.key_sep = expect_string(seps.as_list().items[1], "separator");
    }
    style.sort_keys = arg(a, 3, "sort_keys", Value(false)).truthy();
    return make_string(to_json(v, style));
  }
  if (name == "replace") {
    const std::string s = v.str();
    const std::string& from = expect_string(arg(a, 0, "old"), "replace");
    const std::string& to = expect_string(arg(a, 1, "new"), "replace");
    if (from.empty()) throw TemplateError(ErrorKind::kType, "replace with an empty pattern is not supported");
    const std::string out = py_replace(s, from, to, arg_int(a, 2, "count", -1));
    return make_string(out);
  }
  if (name == "join") {
    const std::string sep = arg(a, 0, "d", Value("")).str();
    const Value attr = arg(a, 1, "attribute");
    std::string out;
    bool first = true;
    for (const auto& item : iterate(v)) {
      if (!first) out += sep;
      first = false;
      out += (attr.is_string() ? get_path(*this, item, attr.as_string()) : item).str();
      check_size(out.size());
    }
    return Value(out);
  }
  if (name == "default" || name == "d") {
    const bool boolean = arg(a, 1, "boolean", Value(false)).truthy();
    if (v.is_undefined() || (boolean && !v.truthy())) return arg(a, 0, "default_value", Value(""));
    return v;
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::list({});
    if (!v.is_dict()) throw TemplateError(ErrorKind::kType, "can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, x] : v.as_dict().items) out.push_back(Value::list({k, x}, true));
    return Value::list(std::move(out));
  }
  if (name == "dictsort") {
    if (!v.is_dict())
      throw TemplateError(ErrorKind::kType,
                          std::string("dictsort: expected a mapping, found ") + v.type_name());
    const bool case_sensitive = arg(a, 0, "case_sensitive", Value(false)).truthy();
    const std::string by = arg(a, 1, "by", Value("key")).str();
    const bool reverse = arg(a, 2, "reverse", Value(false)).truthy();
    std::vector<Value> pairs;
    for (const auto& [k, x] : v.as_dict().items) pairs.push_back(Value::list({k, x}, true));
    return Value::list(sorted(*this, std::move(pairs), reverse, case_sensitive, by == "value" ? "1" : "0"));
  }
  if (name == "first") {
    if (v.is_string() || v.is_list() || v.is_dict()) {
      const auto items = iterate(v);
      if (!items.empty()) return items.front();
    }
    if (v.is_undefined() || v.is_string() || v.is_list() || v.is_dict())
      return Value::undefined("No first item, sequence was empty.");
    throw TemplateError(ErrorKind::kType, std::string("'") + v.type_name() + "' object is not iterable");
  }
  if (name == "last") {
    if (v.is_list() && v.as_list().generator)
      throw TemplateError(ErrorKind::kType, "'generator' object is not reversible");
    const auto items = iterate(v);
    if (!items.empty()) return items.back();
    return Value::undefined("No last item, sequence was empty.");
  }
  if (name == "int") return to_int(v, arg(a, 0, "default", Value(0)));
  if (name == "float") return to_float(v, arg(a, 0, "default", Value(0.0)));
  if (name == "abs") {
    if (v.is_float()) return Value(std::fabs(v.as_double()));
    if (v.is_int() || v.is_bool()) {
      if (v.as_int() == INT64_MIN) throw TemplateError(ErrorKind::kLimit, "integer overflow");
      return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    throw TemplateError(ErrorKind::kType, std::string("bad operand type for abs(): '") + v.type_name() + "'");
  }
  if (name == "round") {
    if (!v.is_number())
      throw TemplateError(ErrorKind::kType, std::string("round: expected a number, found ") + v.type_name());
    const int64_t precision = std::clamp<int64_t>(arg_int(a, 0, "precision", 0), -20, 20);
    const std::string method = arg(a, 1, "method", Value("common")).str();
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.as_double() * scale;
    double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
    return Value(r / scale);
  }
  if (name == "list") return make_list(iterate(v));
  if (name == "unique") {
    const bool case_sensitive = arg(a, 0, "case_sensitive", Value(false)).truthy();
    const Value attr = arg(a, 1, "attribute");
    std::vector<Value> seen, out;
    for (const auto& item : iterate(v)) {
      Value key = attr.is_string() ? get_path(*this, item, attr.as_string()) : item;
      if (!case_sensitive && key.is_string()) key = Value(py_lower(key.as_string()));
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return values_equal(s, key); })) {
        seen.push_back(key);
        out.push_back(item);
      }
    }
    return generator(std::move(out));
  }
  if (name == "sort") {
    const bool reverse = arg(a, 0, "reverse", Value(false)).truthy();
    const bool case_sensitive = arg(a, 1, "case_sensitive", Value(false)).truthy();
    const Value attr = arg(a, 2, "attribute");
    return Value::list(
        sorted(*this, iterate(v), reverse, case_sensitive, attr.is_string() ? attr.as_string() : ""));
  }
  if (name == "reverse") {
    if (v.is_string()) {
      auto offs = utf8_offsets(v.as_string());
      std::string out;
      for (size_t i = offs.size() - 1; i > 0; --i)
        out += v.as_string().substr(offs[i - 1], offs[i] - offs[i - 1]);
      return Value(out);
    }
    auto items = iterate(v);
    std::reverse(items.begin(), items.end());
    return generator(std::move(items));
  }
  if (name == "map") {
    std::vector<Value> out;
    if (!v.truthy()) return generator({});
    const Value attr = arg(a, 99, "attribute");
    if (attr.is_string()) {
      const Value def = arg(a, 99, "default");
      for (const auto& item : iterate(v)) {
        Value x = get_path(*this, item, attr.as_string());
        out.push_back(x.is_undefined() && !def.is_undefined() ? def : x);
      }
      return generator(std::move(out));
    }
    if (a.positional.empty()) throw TemplateError(ErrorKind::kType, "map requires a filter argument");
    const std::string filter = expect_string(a.positional[0], "filter name");
    Args rest;
    rest.positional.assign(a.positional.begin() + 1, a.positional.end());
    rest.keyword = a.keyword;
    for (const auto& item : iterate(v)) {
      Args copy = rest;
      out.push_back(apply_filter(filter, item, copy, line));
    }
    return generator(std::move(out));
  }
  if (name == "select") return generator(select_items(*this, v, a, false, true));
  if (name == "reject") return generator(select_items(*this, v, a, false, false));
  if (name == "selectattr") return generator(select_items(*this, v, a, true, true));
  if (name == "rejectattr") return generator(select_items(*this, v, a, true, false));
  if (name == "indent") {
    const Value w = arg(a, 0, "width", Value(4));
    std::string ind;
    if (w.is_string()) {
      ind = w.as_string();
    } else {
      ind = std::string(static_cast<size_t>(std::clamp<int64_t>(arg_int(a, 0, "width", 4), 0, 1024)), ' ');
    }
    const std::string s = v.str();
    check_size(s.size() + ind.size() * (static_cast<size_t>(std::count(s.begin(), s.end(), '\n')) + 2));
    return Value(indent_lines(s, ind, arg(a, 1, "first", Value(false)).truthy(),
                              arg(a, 2, "blank", Value(false)).truthy()));
  }
  if (name == "center") {
    const std::string s = v.str();
    const int64_t width =
        std::min<int64_t>(arg_int(a, 0, "width", 80), static_cast<int64_t>(limits_.max_output_bytes));
    const auto len = static_cast<int64_t>(py_len(Value(s)));
    if (width <= len) return Value(s);
    const int64_t total = width - len;
    const int64_t left = total / 2 + (total & width & 1);
    return Value(std::string(static_cast<size_t>(left), ' ') + s +
                 std::string(static_cast<size_t>(total - left), ' '));
  }
  if (name == "batch") {
    const int64_t size = arg_int(a, 0, "linecount", 1);
    if (size <= 0) throw TemplateError(ErrorKind::kType, "batch size must be positive");
    const Value fill = arg(a, 1, "fill_with");
    std::vector<Value> out, cur;
    for (const auto& item : iterate(v)) {
      cur.push_back(item);
      if (static_cast<int64_t>(cur.size()) == size) out.push_back(Value::list(std::exchange(cur, {})));
    }
    if (!cur.empty()) {
      if (!fill.is_undefined())
        while (static_cast<int64_t>(cur.size()) < size) cur.push_back(fill);
      out.push_back(Value::list(std::move(cur)));
    }
    return generator(std::move(out));
  }
  if (name == "escape" || name == "e") return v.is_markup() ? v : Value::markup(html_escape(v.str()));
  if (name == "min" || name == "max") {
    auto items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    const Value attr = arg(a, 1, "attribute");
    auto s =
        sorted(*this, std::move(items), name == "max", arg(a, 0, "case_sensitive", Value(false)).truthy(),
               attr.is_string() ? attr.as_string() : "");
    return s.front();
  }
  if (name == "sum") {
    const Value attr = arg(a, 0, "attribute");
    Value total = arg(a, 1, "start", Value(0));
    for (const auto& item : iterate(v))
      total =
          eval_binary("+", total, attr.is_string() ? get_path(*this, item, attr.as_string()) : item, line);
    return total;
  }
  if (name == "attr") return get_attr(v, expect_string(arg(a, 0, "name"), "attribute name"));
  if (name == "format") {
    Value tuple = Value::list(a.positional, true);
    return eval_binary("%", Value(v.str()), tuple, line);
  }
  throw TemplateError(ErrorKind::kType, "No filter named '" + name + "'.");
}

bool Interpreter::apply_test(const std::string& name, const Value& v, Args& a) {
  const Value other = arg(a, 0, "value");
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
  if (name == "sequence") return (v.is_list() && !v.as_list().generator) || v.is_dict() || v.is_string();
  if (name == "callable") return v.is_callable();
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return values_equal(v, other);
  if (name == "ne" || name == "!=") return !values_equal(v, other);
  if (name == "lt" || name == "lessthan") return python_compare(v, other) < 0;
  if (name == "le") return python_compare(v, other) <= 0;
  if (name == "gt" || name == "greaterthan") return python_compare(v, other) > 0;
  if (name == "ge") return python_compare(v, other) >= 0;
  if (name == "in") return eval_compare("in", v, other, 0);
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (v.is_undefined()) throw_undefined(v);
    if (!v.is_int() && !v.is_bool()) throw TemplateError(ErrorKind::kType, name + " test needs an integer");
    if (name == "divisibleby") {
      const int64_t d = arg_int(a, 0, "num", 1);
      if (d == 0) throw TemplateError(ErrorKind::kType, "integer division or modulo by zero");
      return d == -1 || v.as_int() % d == 0;
    }
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  if (name == "lower") return v.is_string() && py_lower(v.as_string()) == v.as_string();
  if (name == "upper") return v.is_string() && py_upper(v.as_string()) == v.as_string();
  if (name == "escaped") return false;
  throw TemplateError(ErrorKind::kType, "No test named '" + name + "'.");
}

}  // namespace paddock::jinja
