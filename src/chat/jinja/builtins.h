// Builtins of the Jinja engine shared across its files: the global functions (range,
// dict, namespace, raise_exception, strftime_now), argument helpers for native callables,
// and Python's json.dumps as used by Hugging Face's `tojson` (insertion order, ", " and
// ": " separators, ensure_ascii off unless asked, optional indent).
//   install_globals(scope.vars); std::string j = to_json(v, JsonStyle{});
#pragma once

#include <functional>
#include <map>
#include <string>

#include "chat/jinja/value.h"

namespace paddock::jinja {

void install_globals(std::map<std::string, Value, std::less<>>& vars);

// Argument `pos` or keyword `name`, else `def`.
Value arg(const Args& a, size_t pos, const char* name, const Value& def = Value());
int64_t arg_int(const Args& a, size_t pos, const char* name, int64_t def);
// TypeError unless v is a str (after the undefined check).
const std::string& expect_string(const Value& v, const char* what);

struct JsonStyle {
  int indent = -1;  // < 0: one line
  std::string indent_str;
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  size_t max_bytes = Value::kDefaultMaxPrint;
};
std::string to_json(const Value& v, const JsonStyle& style);

// Python str methods used by filters too.
std::string py_strip(const std::string& s, const Value& chars, bool left, bool right);
std::string py_lower(std::string s);
std::string py_upper(std::string s);
std::string py_capitalize(const std::string& s);
std::string py_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count);
size_t py_len(const Value& v);
std::string html_escape(const std::string& s);
// Python ordering (<): -1, 0, 1; TypeError between unorderable types.
int python_compare(const Value& a, const Value& b);

}  // namespace paddock::jinja
