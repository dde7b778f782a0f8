#include "server/go_json_error.h"

#include <cstdio>

namespace paddock::server {

namespace {

// Go's quoteChar: the byte as a Go character literal.
std::string quote_char(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  if (c == '\n') return "'\\n'";
  if (c == '\r') return "'\\r'";
  if (c == '\t') return "'\\t'";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "'\\x%02x'", c);
  return buf;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A recursive scanner with Go's scanner.go states as its error contexts. Each parse_*
// returns false with `error` set at the first bad byte.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {}

  std::string run() {
    skip_space();
    if (parse_value()) {
      skip_space();
      if (at_ < s_.size()) fail("after top-level value");
    }
    return error_;
  }

 private:
  bool fail(std::string_view context) {
    if (at_ >= s_.size()) {
      error_ = "unexpected end of JSON input";
    } else {
      error_ =
          "invalid character " + quote_char(static_cast<unsigned char>(s_[at_])) + " " + std::string(context);
    }
    return false;
  }
  bool more() const { return at_ < s_.size(); }
  bool close() {  // consumes the closing byte of a value
    ++at_;
    return true;
  }
  char peek() const { return s_[at_]; }
  void skip_space() {
    while (more() && is_space(peek())) ++at_;
  }

  bool parse_value() {
    if (!more()) return fail("looking for beginning of value");
    switch (peek()) {
      case '{': return parse_object();
      case '[': return parse_array();
      case '"': return parse_string();
      case 't': return parse_literal("true");
      case 'f': return parse_literal("false");
      case 'n': return parse_literal("null");
      default:
        if (peek() == '-' || is_digit(peek())) return parse_number();
        return fail("looking for beginning of value");
    }
  }

  bool parse_object() {
    return parse_sequence('}', "after object key:value pair", [this] {
      if (!more() || peek() != '"') return fail("looking for beginning of object key string");
      if (!parse_string()) return false;
      skip_space();
      if (!more() || peek() != ':') return fail("after object key");
      ++at_;
      skip_space();
      return parse_value();
    });
  }

  bool parse_array() {
    return parse_sequence(']', "after array element", [this] { return parse_value(); });
  }

  // '{' or '[' at at_: elements separated by commas up to `end`; `after` names what a wrong
  // character follows, as Go's messages do.
  template <typename Element>
  bool parse_sequence(char end, const char* after, Element element) {
    ++at_;
    skip_space();
    if (more() && peek() == end) return close();
    for (;;) {
      if (!element()) return false;
      skip_space();
      if (more() && peek() == ',') {
        ++at_;
        skip_space();
        continue;
      }
      if (more() && peek() == end) return close();
      return fail(after);
    }
  }

  bool parse_string() {
    ++at_;
    while (more()) {
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') return close();
      if (c < 0x20) return fail("in string literal");
      ++at_;
      if (c != '\\') continue;
      if (!more()) break;
      const char e = peek();
      if (e == 'u') {
        ++at_;
        for (int k = 0; k < 4; ++k, ++at_) {
          if (!more() || !is_hex(peek())) return fail("in \\u hexadecimal character escape");
        }
      } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
                 e == 't') {
        ++at_;
      } else {
        return fail("in string escape code");
      }
    }
    return fail("in string literal");
  }

  bool parse_literal(std::string_view word) {
    for (size_t k = 0; k < word.size(); ++k, ++at_) {
      if (!more() || peek() != word[k]) {
        return fail("in literal " + std::string(word) + " (expecting '" + word[k] + "')");
      }
    }
    return true;
  }

  bool parse_number() {
    if (peek() == '-') {
      ++at_;
      if (!more() || !is_digit(peek())) return fail("in numeric literal");
    }
    if (peek() == '0') {
      ++at_;
    } else {
      while (more() && is_digit(peek())) ++at_;
    }
    if (more() && peek() == '.') {
      ++at_;
      if (!more() || !is_digit(peek())) return fail("after decimal point in numeric literal");
      while (more() && is_digit(peek())) ++at_;
    }
    if (more() && (peek() == 'e' || peek() == 'E')) {
      ++at_;
      if (more() && (peek() == '+' || peek() == '-')) ++at_;
      if (!more() || !is_digit(peek())) return fail("in exponent of numeric literal");
      while (more() && is_digit(peek())) ++at_;
    }
    return true;
  }

  std::string_view s_;
  size_t at_ = 0;
  std::string error_;
};

}  // namespace

std::string go_json_syntax_error(std::string_view text) { return Scanner(text).run(); }

}  // namespace paddock::server
