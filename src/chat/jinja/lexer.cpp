#include "chat/jinja/lexer.h"

#include <cctype>
#include <cstdint>

#include "chat/jinja/error.h"
#include "chat/jinja/utf8.h"

namespace paddock::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string rstrip_ws(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && is_space(s[n - 1])) --n;
  return std::string(s.substr(0, n));
}

int count_newlines(std::string_view s) {
  int n = 0;
  for (const char c : s) n += c == '\n';
  return n;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Python's unicode-escape decoding of a string literal body (what jinja2 applies).
std::string decode_escapes(std::string_view body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\n': break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t n = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
        uint32_t cp = 0;
        bool ok = i + n < body.size() + 1;
        for (size_t k = 1; ok && k <= n; ++k) {
          const int h = i + k < body.size() ? hex_value(body[i + k]) : -1;
          if (h < 0) ok = false;
          cp = cp * 16 + static_cast<uint32_t>(h < 0 ? 0 : h);
        }
        if (!ok || cp > 0x10FFFF)
          throw TemplateError(ErrorKind::kSyntax, std::string("invalid \\") + std::string(1, e) + " escape");
        append_utf8(out, cp);
        i += n;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          uint32_t cp = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
            cp = cp * 8 + static_cast<uint32_t>(body[++i] - '0');
          append_utf8(out, cp);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string_view src, bool trim, bool lstrip) : trim_(trim), lstrip_(lstrip) {
    // jinja2 normalises newlines and drops one trailing newline (keep_trailing_newline=False).
    src_.reserve(src.size());
    for (size_t i = 0; i < src.size(); ++i) {
      if (src[i] == '\r') {
        src_ += '\n';
        if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
      } else {
        src_ += src[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      if (tag == std::string::npos) {
        emit(TokenKind::kText, src_.substr(pos_));
        advance_to(src_.size());
        break;
      }
      const char kind = src_[tag + 1];
      const char sign =
          tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : 0;
      std::string text = src_.substr(pos_, tag - pos_);
      const size_t raw_end = kind == '%' ? match_raw_begin(tag) : std::string::npos;
      apply_lstrip(text, sign, kind != '{');
      emit(TokenKind::kText, text);
      advance_to(tag);
      if (raw_end != std::string::npos) {
        lex_raw(raw_end);
      } else if (kind == '#') {
        lex_comment(tag + 2 + (sign ? 1 : 0));
      } else {
        lex_tag(kind == '%', tag + 2 + (sign ? 1 : 0));
      }
    }
    tokens_.push_back(Token{TokenKind::kEof, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  void apply_lstrip(std::string& text, char sign, bool block_like) {
    if (sign == '-') {
      text = rstrip_ws(text);
    } else if (sign != '+' && lstrip_ && block_like) {
      const size_t nl = text.rfind('\n');
      const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < text.size()) {
        bool all_ws = true;
        for (size_t i = l_pos; i < text.size(); ++i) all_ws = all_ws && is_space(text[i]);
        if (all_ws) text.resize(l_pos);
      }
    }
  }

  void emit(TokenKind k, std::string text) {
    if (k == TokenKind::kText && text.empty()) return;
    tokens_.push_back(Token{k, std::move(text), line_});
  }

  void advance_to(size_t p) {
    line_ += count_newlines(std::string_view(src_).substr(pos_, p - pos_));
    line_starting_ = p > pos_ && src_[p - 1] == '\n';
    pos_ = p;
  }

  size_t skip_ws(size_t p) const {
    while (p < src_.size() && is_space(src_[p])) ++p;
    return p;
  }

  // Matches `{%[-+]? raw [-]%}` at p; returns the end of the tag (after `-%}`'s whitespace).
  size_t match_raw_begin(size_t p) const { return match_word_tag(p, "raw", false); }

  size_t match_word_tag(size_t p, std::string_view word, bool with_suffix) const {
    size_t q = p + 2;
    if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) ++q;
    q = skip_ws(q);
    if (src_.compare(q, word.size(), word) != 0) return std::string::npos;
    q = skip_ws(q + word.size());
    if (with_suffix && src_.compare(q, 3, "+%}") == 0) return q + 3;
    if (src_.compare(q, 3, "-%}") == 0) return skip_ws(q + 3);
    if (src_.compare(q, 2, "%}") == 0) {
      q += 2;
      if (with_suffix && trim_ && q < src_.size() && src_[q] == '\n') ++q;
      return q;
    }
    return std::string::npos;
  }

  void lex_raw(size_t body_start) {
    advance_to(body_start);
    for (size_t i = body_start; i + 1 < src_.size(); ++i) {
      if (src_[i] != '{' || src_[i + 1] != '%') continue;
      const size_t end = match_word_tag(i, "endraw", true);
      if (end == std::string::npos) continue;
      const char sign = (src_[i + 2] == '-' || src_[i + 2] == '+') ? src_[i + 2] : 0;
      std::string text = src_.substr(body_start, i - body_start);
      apply_lstrip(text, sign, true);
      emit(TokenKind::kText, text);
      advance_to(end);
      return;
    }
    throw TemplateError(ErrorKind::kSyntax, "Missing end of raw directive", line_);
  }

  void lex_comment(size_t from) {
    const size_t close = src_.find("#}", from);
    if (close == std::string::npos)
      throw TemplateError(ErrorKind::kSyntax, "Missing end of comment tag", line_);
    size_t end = close + 2;
    const char before = close > from ? src_[close - 1] : 0;
    if (before == '-') {
      end = skip_ws(end);
    } else if (before != '+' && trim_ && end < src_.size() && src_[end] == '\n') {
      ++end;
    }
    advance_to(end);
  }

  void lex_tag(bool block, size_t p) {
    emit_token(block ? TokenKind::kBlockBegin : TokenKind::kVarBegin, block ? "{%" : "{{");
    advance_to(p);
    int depth = 0;
    while (true) {
      size_t q = pos_;
      if (q >= src_.size())
        throw TemplateError(ErrorKind::kSyntax, "unexpected end of template, expected end of tag", line_);
      if (depth == 0) {
        const size_t end = match_tag_end(q, block);
        if (end != std::string::npos) {
          emit_token(block ? TokenKind::kBlockEnd : TokenKind::kVarEnd, block ? "%}" : "}}");
          advance_to(end);
          return;
        }
      }
      const char c = src_[q];
      if (is_space(c)) {
        advance_to(skip_ws(q));
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number(q);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t e = q;
        while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        emit_token(TokenKind::kName, src_.substr(q, e - q));
        advance_to(e);
      } else if (c == '\'' || c == '"') {
        lex_string(q);
      } else {
        static const char* const kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*",
                                           "/",  "%",  "~",  "<",  ">",  "=",  ".", ",", ":",
                                           "|",  "(",  ")",  "[",  "]",  "{",  "}"};
        std::string op;
        for (const char* o : kOps) {
          if (src_.compare(q, std::char_traits<char>::length(o), o) == 0) {
            op = o;
            break;
          }
        }
        if (op.empty())
          throw TemplateError(ErrorKind::kSyntax, std::string("unexpected char '") + std::string(1, c) + "'",
                              line_);
        if (op == "(" || op == "[" || op == "{") ++depth;
        if (op == ")" || op == "]" || op == "}") {
          if (depth == 0) throw TemplateError(ErrorKind::kSyntax, "unexpected '" + op + "'", line_);
          --depth;
        }
        emit_token(TokenKind::kOp, op);
        advance_to(q + op.size());
      }
    }
  }

  size_t match_tag_end(size_t q, bool block) const {
    if (block) {
      if (src_.compare(q, 3, "+%}") == 0) return q + 3;
      if (src_.compare(q, 3, "-%}") == 0) return skip_ws(q + 3);
      if (src_.compare(q, 2, "%}") == 0)
        return q + 2 + (trim_ && q + 2 < src_.size() && src_[q + 2] == '\n' ? 1 : 0);
      return std::string::npos;
    }
    if (src_.compare(q, 3, "-}}") == 0) return skip_ws(q + 3);
    if (src_.compare(q, 2, "}}") == 0) return q + 2;
    return std::string::npos;
  }

  void lex_number(size_t q) {
    auto digits = [&](size_t p) {
      while (p < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[p])) || src_[p] == '_')) ++p;
      return p;
    };
    size_t e = digits(q);
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
      e = digits(e + 1);
      is_float = true;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t x = e + 1;
      if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
      if (x < src_.size() && std::isdigit(static_cast<unsigned char>(src_[x]))) {
        e = digits(x);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = q; i < e; ++i)
      if (src_[i] != '_') text += src_[i];
    emit_token(is_float ? TokenKind::kFloat : TokenKind::kInt, text);
    advance_to(e);
  }

  void lex_string(size_t q) {
    const char quote = src_[q];
    size_t e = q + 1;
    while (e < src_.size() && src_[e] != quote) e += src_[e] == '\\' ? 2 : 1;
    if (e >= src_.size()) throw TemplateError(ErrorKind::kSyntax, "unexpected end of string", line_);
    emit_token(TokenKind::kString, decode_escapes(std::string_view(src_).substr(q + 1, e - q - 1)));
    advance_to(e + 1);
  }

  void emit_token(TokenKind k, std::string text) { tokens_.push_back(Token{k, std::move(text), line_}); }

  std::string src_;
  bool trim_, lstrip_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source, bool trim_blocks, bool lstrip_blocks) {
  return Lexer(source, trim_blocks, lstrip_blocks).run();
}

}  // namespace paddock::jinja
