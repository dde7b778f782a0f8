// The parse tree of a Go text/template, as produced by parse_go_template (gotmpl_parser.cpp)
// and walked by the executor (gotmpl_exec.cpp). Node shapes follow text/template/parse so
// that Ollama's tree rewrites (appending {{ .Response }}, cutting after the first .Response)
// can be expressed the same way.
// Invariants: nodes are immutable once parsed (rewrites build new nodes and share subtrees);
// every variable used was declared (checked while parsing); every function name exists.
//   PADDOCK_ASSIGN(ParsedTemplate t, parse_go_template(text, is_function));
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "chat/value.h"

namespace paddock::chat {

enum class NodeKind {
  // statements
  kList,
  kText,
  kAction,
  kIf,
  kRange,
  kWith,
  kTemplate,
  kBreak,
  kContinue,
  // pipelines and their parts
  kPipe,
  kCommand,
  // operands
  kField,       // .A.B            idents = {A, B}
  kVariable,    // $x.A            text = "$x", idents = {A}
  kDot,         // .
  kNil,         // nil
  kLiteral,     // true, 3, 1.5, "s", 'c'   literal holds the value
  kIdentifier,  // a function name
  kChain,       // (pipe).A.B     pipe = operand, idents = {A, B}
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  NodeKind kind = NodeKind::kList;
  int line = 1;
  int col = 1;
  std::string text;                 // text, function/template name, variable name
  std::vector<std::string> idents;  // field chain
  Value literal;
  std::vector<NodePtr> nodes;     // list items, command args, pipe commands
  std::vector<std::string> decl;  // pipe: declared/assigned variables
  bool is_assign = false;         // pipe: `=` rather than `:=`
  NodePtr pipe;                   // action/if/range/with/template condition; chain operand
  NodePtr list;                   // if/range/with body
  NodePtr else_list;              // may be null
};

struct ParsedTemplate {
  NodePtr root;
  std::map<std::string, NodePtr, std::less<>> defines;  // {{define}} and {{block}} bodies
};

// Parses `text`; `is_function(name)` says whether an identifier names a function (Go checks
// this at parse time). Errors read "line:col: what was expected, what was found".
Result<ParsedTemplate> parse_go_template(std::string_view text,
                                         const std::function<bool(std::string_view)>& is_function);

}  // namespace paddock::chat
