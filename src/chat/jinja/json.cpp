// Python's json.dumps, as Hugging Face's tojson filter calls it.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/jinja/builtins.h"
#include "chat/jinja/error.h"
#include "chat/jinja/utf8.h"

namespace paddock::jinja {
namespace {

void hex4(std::string& out, uint32_t u) {
  char b[16];
  std::snprintf(b, sizeof(b), "\\u%04x", u & 0xFFFFu);
  out += b;
}

// One byte below 0x80, or a non-ASCII byte passed through (ensure_ascii off).
void escape_byte(std::string& out, char ch) {
  switch (ch) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (static_cast<unsigned char>(ch) < 0x20) {
        hex4(out, static_cast<unsigned char>(ch));
      } else {
        out += ch;
      }
  }
}

void escape_into(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  if (ensure_ascii && !is_ascii(s)) {
    for (const uint32_t c : utf8_decode(s)) {
      if (c < 0x80) {
        escape_byte(out, static_cast<char>(c));
      } else if (c >= 0x10000) {
        hex4(out, 0xD800 | ((c - 0x10000) >> 10));
        hex4(out, 0xDC00 | ((c - 0x10000) & 0x3FF));
      } else {
        hex4(out, c);
      }
    }
  } else {
    for (const char ch : s) escape_byte(out, ch);
  }
  out += '"';
}

std::string key_string(const Value& k) {
  if (k.is_string()) return k.as_string();
  if (k.is_bool()) return k.as_bool() ? "true" : "false";
  if (k.is_none()) return "null";
  if (k.is_int()) return std::to_string(k.as_int());
  if (k.is_float()) return python_float_repr(k.as_double());
  throw TemplateError(ErrorKind::kType,
                      std::string("keys must be str, int, float, bool or None, not ") + k.type_name());
}

void dump(std::string& out, const Value& v, const JsonStyle& st, int level) {
  if (level > 512) throw TemplateError(ErrorKind::kLimit, "tojson: value nested too deeply");
  if (out.size() > st.max_bytes)
    throw TemplateError(ErrorKind::kLimit,
                        std::string("tojson: output exceeds ") + std::to_string(st.max_bytes) + " bytes");
  auto newline = [&](int lvl) {
    out += '\n';
    for (int i = 0; i < lvl; ++i) out += st.indent_str;
  };
  switch (v.kind()) {
    case Value::Kind::kNone: out += "null"; return;
    case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: {
      const double d = v.as_double();
      if (std::isnan(d)) {
        out += "NaN";
      } else if (std::isinf(d)) {
        out += d < 0 ? "-Infinity" : "Infinity";
      } else {
        out += python_float_repr(d);
      }
      return;
    }
    case Value::Kind::kString: escape_into(out, v.as_string(), st.ensure_ascii); return;
    case Value::Kind::kList: {
      if (v.as_list().generator)
        throw TemplateError(ErrorKind::kType, "Object of type generator is not JSON serializable");
      const auto& items = v.as_list().items;
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += st.item_sep;
        if (st.indent >= 0) newline(level + 1);
        dump(out, items[i], st, level + 1);
      }
      if (st.indent >= 0) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::kDict: {
      std::vector<std::pair<std::string, const Value*>> items;
      for (const auto& [k, x] : v.as_dict().items) items.emplace_back(key_string(k), &x);
      if (st.sort_keys)
        std::stable_sort(items.begin(), items.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      if (items.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += st.item_sep;
        if (st.indent >= 0) newline(level + 1);
        escape_into(out, items[i].first, st.ensure_ascii);
        out += st.key_sep;
        dump(out, *items[i].second, st, level + 1);
      }
      if (st.indent >= 0) newline(level);
      out += '}';
      return;
    }
    default:
      throw TemplateError(ErrorKind::kType,
                          std::string("Object of type ") + v.type_name() + " is not JSON serializable");
  }
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  dump(out, v, style, 0);
  return out;
}

}  // namespace paddock::jinja
