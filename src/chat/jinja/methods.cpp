// Attribute access (jinja2's getattr-then-getitem order) and the sandboxed methods of
// str, dict and list. Names starting with `_` and methods that mutate are refused like
// ImmutableSandboxedEnvironment does (SecurityError).
#include <algorithm>
#include <cctype>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/utf8.h"

namespace paddock::jinja {
namespace {

bool is_py_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::vector<std::string> split_ws(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = 0;
  while (true) {
    while (i < s.size() && is_py_space(s[i])) ++i;
    if (i >= s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      size_t e = s.size();
      while (e > i && is_py_space(s[e - 1])) --e;
      out.push_back(s.substr(i, e - i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !is_py_space(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> split_sep(const std::string& s, const std::string& sep, int64_t maxsplit) {
  if (sep.empty()) throw TemplateError(ErrorKind::kType, "empty separator");
  std::vector<std::string> out;
  size_t i = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t j = s.find(sep, i);
    if (j == std::string::npos) break;
    out.push_back(s.substr(i, j - i));
    i = j + sep.size();
  }
  out.push_back(s.substr(i));
  return out;
}

std::vector<std::string> rsplit_sep(const std::string& s, const std::string& sep, int64_t maxsplit) {
  if (maxsplit < 0) return split_sep(s, sep, -1);
  if (sep.empty()) throw TemplateError(ErrorKind::kType, "empty separator");
  std::vector<std::string> out;
  size_t end = s.size();
  while (static_cast<int64_t>(out.size()) < maxsplit && end >= sep.size()) {
    const size_t j = s.rfind(sep, end - sep.size());
    if (j == std::string::npos) break;
    out.push_back(s.substr(j + sep.size(), end - j - sep.size()));
    end = j;
  }
  out.push_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

Value to_list(Interpreter& in, const std::vector<std::string>& parts) {
  std::vector<Value> items(parts.begin(), parts.end());
  return in.make_list(std::move(items));
}

bool affix_match(const Value& self, const Value& affix, bool prefix) {
  const std::string& s = self.as_string();
  auto one = [&](const Value& a) {
    const std::string& x = expect_string(a, prefix ? "startswith" : "endswith");
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is_list()) {
    for (const auto& a : affix.as_list().items)
      if (one(a)) return true;
    return false;
  }
  return one(affix);
}

int64_t cp_index(const std::string& s, size_t byte_pos) {
  if (byte_pos == std::string::npos) return -1;
  return static_cast<int64_t>(utf8_offsets(s.substr(0, byte_pos)).size()) - 1;
}

// str.format with {} / {0} / {name} fields (no format specs beyond nothing).
std::string py_format(Interpreter& in, const std::string& fmt, const Args& a) {
  std::string out;
  size_t auto_idx = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (c == '{') {
      const size_t close = fmt.find('}', i);
      if (close == std::string::npos)
        throw TemplateError(ErrorKind::kType, "Single '{' encountered in format string");
      const std::string field = fmt.substr(i + 1, close - i - 1);
      Value v;
      if (field.empty()) {
        if (auto_idx >= a.positional.size())
          throw TemplateError(ErrorKind::kType, "Replacement index out of range");
        v = a.positional[auto_idx++];
      } else if (std::all_of(field.begin(), field.end(),
                             [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
        const size_t k = std::stoul(field.substr(0, 9));
        if (k >= a.positional.size()) throw TemplateError(ErrorKind::kType, "Replacement index out of range");
        v = a.positional[k];
      } else {
        bool found = false;
        for (const auto& [name, val] : a.keyword) {
          if (name == field) {
            v = val;
            found = true;
          }
        }
        if (!found) throw TemplateError(ErrorKind::kType, "KeyError: '" + field + "'");
      }
      out += v.str();
      in.check_size(out.size());
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

Value str_method(Interpreter& in, const std::string& name, const Value& self, Args& a) {
  const std::string& s = self.as_string();
  if (name == "strip") return Value(py_strip(s, arg(a, 0, "chars"), true, true));
  if (name == "lstrip") return Value(py_strip(s, arg(a, 0, "chars"), true, false));
  if (name == "rstrip") return Value(py_strip(s, arg(a, 0, "chars"), false, true));
  if (name == "upper") return Value(py_upper(s));
  if (name == "lower") return Value(py_lower(s));
  if (name == "capitalize") return Value(py_capitalize(s));
  if (name == "title") {
    std::string out = s;
    bool prev_letter = false;
    for (char& c : out) {
      const bool letter = std::isalpha(static_cast<unsigned char>(c)) != 0;
      if (letter)
        c = static_cast<char>(prev_letter ? std::tolower(static_cast<unsigned char>(c))
                                          : std::toupper(static_cast<unsigned char>(c)));
      prev_letter = letter;
    }
    return Value(out);
  }
  if (name == "split" || name == "rsplit") {
    const Value sep = arg(a, 0, "sep");
    const int64_t maxsplit = arg_int(a, 1, "maxsplit", -1);
    if (sep.is_undefined() || sep.is_none()) return to_list(in, split_ws(s, name == "split" ? maxsplit : -1));
    const std::string& sp = expect_string(sep, "separator");
    return to_list(in, name == "split" ? split_sep(s, sp, maxsplit) : rsplit_sep(s, sp, maxsplit));
  }
  if (name == "splitlines") {
    std::vector<std::string> lines = split_sep(s, "\n", -1);
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    return to_list(in, lines);
  }
  if (name == "startswith") return Value(affix_match(self, arg(a, 0, "prefix"), true));
  if (name == "endswith") return Value(affix_match(self, arg(a, 0, "suffix"), false));
  if (name == "replace") {
    const std::string& from = expect_string(arg(a, 0, "old"), "replace");
    const std::string& to = expect_string(arg(a, 1, "new"), "replace");
    const int64_t count = arg_int(a, 2, "count", -1);
    if (from.empty())
      throw TemplateError(ErrorKind::kType, "replace() with an empty pattern is not supported");
    if (!to.empty() && to.size() > from.size()) {
      size_t occurrences = 0;
      for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + from.size())) ++occurrences;
      in.check_size(s.size() + occurrences * (to.size() - from.size()));
    }
    return Value(py_replace(s, from, to, count));
  }
  if (name == "find" || name == "index") {
    const size_t p = s.find(expect_string(arg(a, 0, "sub"), name.c_str()));
    if (p == std::string::npos && name == "index")
      throw TemplateError(ErrorKind::kType, "substring not found");
    return Value(cp_index(s, p));
  }
  if (name == "rfind") return Value(cp_index(s, s.rfind(expect_string(arg(a, 0, "sub"), "rfind"))));
  if (name == "count") {
    const std::string& sub = expect_string(arg(a, 0, "sub"), "count");
    if (sub.empty()) return Value(static_cast<int64_t>(py_len(self) + 1));
    int64_t n = 0;
    for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
    return Value(n);
  }
  if (name == "format") return in.make_string(py_format(in, s, a));
  if (name == "join") {
    std::string out;
    bool first = true;
    for (const auto& item : in.iterate(arg(a, 0, "iterable"))) {
      if (!first) out += s;
      first = false;
      out += expect_string(item, "join item");
      in.check_size(out.size());
    }
    return Value(out);
  }
  auto all = [&](auto pred) {
    if (s.empty()) return Value(false);
    return Value(
        std::all_of(s.begin(), s.end(), [&](char c) { return pred(static_cast<unsigned char>(c)) != 0; }));
  };
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal")
    return all([](unsigned char c) { return std::isdigit(c); });
  if (name == "isalpha") return all([](unsigned char c) { return std::isalpha(c); });
  if (name == "isalnum") return all([](unsigned char c) { return std::isalnum(c); });
  if (name == "isspace") return all([](unsigned char c) { return std::isspace(c); });
  if (name == "islower") return Value(py_lower(s) == s && py_upper(s) != s);
  if (name == "isupper") return Value(py_upper(s) == s && py_lower(s) != s);
  throw TemplateError(ErrorKind::kType, "unknown str method " + name);
}

Value dict_method(Interpreter& in, const std::string& name, const Value& self, Args& a) {
  const DictData& d = self.as_dict();
  if (name == "get") {
    const Value* v = d.find(arg(a, 0, "key"));
    if (v) return *v;
    const Value def = arg(a, 1, "default");
    return def.is_undefined() ? Value::none() : def;
  }
  if (name == "keys" || name == "values" || name == "items") {
    std::vector<Value> out;
    out.reserve(d.items.size());
    for (const auto& [k, v] : d.items) {
      if (name == "keys") out.push_back(k);
      if (name == "values") out.push_back(v);
      if (name == "items") out.push_back(Value::list({k, v}, /*tuple=*/true));
    }
    return in.make_list(std::move(out));
  }
  if (name == "copy") return Value::dict(std::make_shared<DictData>(d));
  throw TemplateError(ErrorKind::kType, "unknown dict method " + name);
}

Value list_method(Interpreter&, const std::string& name, const Value& self, Args& a) {
  const auto& items = self.as_list().items;
  const Value x = arg(a, 0, "value");
  if (name == "count")
    return Value(static_cast<int64_t>(
        std::count_if(items.begin(), items.end(), [&](const Value& v) { return values_equal(v, x); })));
  for (size_t i = 0; i < items.size(); ++i)
    if (values_equal(items[i], x)) return Value(static_cast<int64_t>(i));
  throw TemplateError(ErrorKind::kType, x.repr() + " is not in list");
}

bool in_list(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

[[noreturn]] void unsafe(const std::string& name, const Value& obj) {
  throw TemplateError(ErrorKind::kSecurity, "access to attribute '" + name + std::string("' of '") +
                                                obj.type_name() + "' object is unsafe.");
}

Value bind(const std::string& name, const Value& self,
           Value (*impl)(Interpreter&, const std::string&, const Value&, Args&)) {
  return Value::callable(name,
                         [name, self, impl](Interpreter& in, Args& a) { return impl(in, name, self, a); });
}

}  // namespace

Value Interpreter::get_attr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) throw_undefined(obj);
  if (!name.empty() && name[0] == '_') unsafe(name, obj);
  switch (obj.kind()) {
    case Value::Kind::kString:
      if (in_list(name,
                  {"strip",     "lstrip",  "rstrip",     "upper",      "lower",    "capitalize", "title",
                   "split",     "rsplit",  "splitlines", "startswith", "endswith", "replace",    "find",
                   "rfind",     "index",   "count",      "format",     "join",     "isdigit",    "isnumeric",
                   "isdecimal", "isalpha", "isalnum",    "isspace",    "islower",  "isupper"}))
        return bind(name, obj, str_method);
      return Value::undefined("'str object' has no attribute '" + name + "'");
    case Value::Kind::kDict:
      if (in_list(name, {"pop", "popitem", "setdefault", "update", "clear"})) unsafe(name, obj);
      if (in_list(name, {"get", "keys", "values", "items", "copy"})) return bind(name, obj, dict_method);
      if (const Value* v = obj.as_dict().find(Value(name))) return *v;
      return Value::undefined("'dict object' has no attribute '" + name + "'");
    case Value::Kind::kList:
      if (in_list(name, {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"}))
        unsafe(name, obj);
      if (in_list(name, {"index", "count"}) && !obj.as_list().generator) return bind(name, obj, list_method);
      return Value::undefined(std::string("'") + obj.type_name() + " object' has no attribute '" + name +
                              "'");
    case Value::Kind::kNamespace:
      if (const Value* v = obj.namespace_attrs().find(Value(name))) return *v;
      return Value::undefined("'Namespace object' has no attribute '" + name + "'");
    case Value::Kind::kNone: return Value::undefined("'None' has no attribute '" + name + "'");
    default:
      return Value::undefined(std::string("'") + obj.type_name() + " object' has no attribute '" + name +
                              "'");
  }
}

}  // namespace paddock::jinja
