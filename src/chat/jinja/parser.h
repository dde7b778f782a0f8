// Jinja parser: tokens (lexer.h) to a statement tree (ast.h), following jinja2's grammar
// and operator precedence. Unknown tags are syntax errors at parse time, as in jinja2;
// unknown filters and tests are looked up only when evaluated (jinja2 defers those too
// inside conditionals, and real templates rely on it). Nesting depth is bounded.
//   Body body = parse(lex(src, true, true), /*max_depth=*/256);
#pragma once

#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"

namespace paddock::jinja {

// Throws TemplateError(kSyntax) with the line of the offending token.
Body parse(const std::vector<Token>& tokens, int max_depth);

}  // namespace paddock::jinja
