#include "store/go_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace paddock::store {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_u(std::string& out, uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
}

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 if invalid (Go's rules:
// no overlongs, no surrogates, max U+10FFFF).
size_t utf8_len(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  size_t n;
  uint32_t c;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, c = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, c = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, c = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    c = (c << 6) | (b & 0x3F);
  }
  if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF))
    return 0;
  *cp = c;
  return n;
}

// Shortest round-trip decimal digits of v (v > 0, finite) and the decimal exponent of the
// first digit: v = d.ddd * 10^exp.
struct Shortest {
  std::string digits;
  int exp = 0;
};

template <typename F>
Shortest shortest(F v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  Shortest out;
  const size_t e = s.find('e');
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.') out.digits += s[i];
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), out.exp);
  while (out.digits.size() > 1 && out.digits.back() == '0') out.digits.pop_back();
  return out;
}

std::string fixed_form(const Shortest& d) {
  std::string out;
  const int n = static_cast<int>(d.digits.size());
  if (d.exp < 0) {
    out = "0.";
    out.append(static_cast<size_t>(-d.exp - 1), '0');
    out += d.digits;
  } else if (d.exp + 1 >= n) {
    out = d.digits;
    out.append(static_cast<size_t>(d.exp + 1 - n), '0');
  } else {
    out = d.digits.substr(0, static_cast<size_t>(d.exp + 1)) + "." +
          d.digits.substr(static_cast<size_t>(d.exp + 1));
  }
  return out;
}

// Go's 'e' form: d.ddde+XX, at least two exponent digits.
std::string exp_form(const Shortest& d) {
  std::string out(1, d.digits[0]);
  if (d.digits.size() > 1) {
    out += '.';
    out.append(d.digits, 1, std::string::npos);
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "e%c%02d", d.exp < 0 ? '-' : '+', std::abs(d.exp));
  return out + buf;
}

template <typename F>
std::string json_float(F v) {
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  const bool neg = v < 0;
  const F a = neg ? -v : v;
  const Shortest d = shortest(a);
  std::string body;
  if (a < static_cast<F>(1e-6) || a >= static_cast<F>(1e21)) {
    body = exp_form(d);
    // encoding/json cleans e-09 to e-9 (only negative two-digit exponents).
    const size_t n = body.size();
    if (n >= 4 && body[n - 4] == 'e' && body[n - 3] == '-' && body[n - 2] == '0') body.erase(n - 2, 1);
  } else {
    body = fixed_form(d);
  }
  return neg ? "-" + body : body;
}

}  // namespace

void append_go_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '<':
        case '>':
        case '&': append_u(out, c); break;
        default:
          if (c < 0x20) {
            append_u(out, c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = utf8_len(s, i, &cp);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else if (cp == 0x2028 || cp == 0x2029) {
      append_u(out, cp);
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += '"';
}

std::string go_json_string(std::string_view s) {
  std::string out;
  append_go_json_string(out, s);
  return out;
}

std::string go_json_float32(float v) { return json_float(v); }
std::string go_json_float64(double v) { return json_float(v); }

std::string go_format_v(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  const bool neg = v < 0;
  const Shortest d = shortest(neg ? -v : v);
  const std::string body = (d.exp < -4 || d.exp >= 6) ? exp_form(d) : fixed_form(d);
  return neg ? "-" + body : body;
}

std::string go_quote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\a': out += "\\a"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\v': out += "\\v"; break;
        default:
          if (c < 0x20 || c == 0x7F) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = utf8_len(s, i, &cp);
    if (n == 0) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out + "\"";
}

}  // namespace paddock::store
