// Jinja lexer: splits a template into text and tag tokens, applying jinja2's whitespace
// rules exactly (`{%-`/`-%}` strip all whitespace, `+` opts out, trim_blocks drops the first
// newline after a block or comment tag, lstrip_blocks drops indentation before one, and one
// trailing newline of the template is removed). Comments vanish; `{% raw %}` becomes text.
//   std::vector<Token> toks = lex(source, /*trim_blocks=*/true, /*lstrip_blocks=*/true);
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paddock::jinja {

enum class TokenKind {
  kText,
  kVarBegin,
  kVarEnd,
  kBlockBegin,
  kBlockEnd,
  kName,
  kString,
  kInt,
  kFloat,
  kOp,
  kEof
};

struct Token {
  TokenKind kind;
  std::string text;  // decoded for strings; the operator or name otherwise
  int line;
};

// Throws TemplateError(kSyntax) on an unterminated tag, comment or string.
std::vector<Token> lex(std::string_view source, bool trim_blocks, bool lstrip_blocks);

}  // namespace paddock::jinja
