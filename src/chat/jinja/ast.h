// The Jinja syntax tree. One node struct per category keeps the evaluator a pair of
// switches; which fields a kind uses is listed beside it. Nodes are immutable after parse.
//   const Expr& e = *stmt.expr; if (e.kind == Expr::Kind::kName) lookup(e.name);
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja/value.h"

namespace paddock::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
using KwArgs = std::vector<std::pair<std::string, ExprPtr>>;

struct Expr {
  enum class Kind {
    kLiteral,  // value
    kName,     // name
    kList,     // children = items
    kTuple,    // children = items
    kDict,     // children = key0, value0, key1, value1, ...
    kAttr,     // children[0].name
    kItem,     // children[0][children[1]]
    kSlice,    // children[0][c1:c2:c3], missing parts are null
    kCall,     // children[0](children[1..], kwargs)
    kFilter,   // children[0] | name(children[1..], kwargs); children[0] null = the block body
    kTest,     // children[0] is [not] name(children[1..]); negated
    kNeg,      // -children[0]
    kPos,      // +children[0]
    kBinary,   // children[0] name children[1]: + - * / // % ** ~
    kCompare,  // children[0] ops[0] children[1] ops[1] children[2] ...
    kAnd,      // children[0] and children[1]
    kOr,       // children[0] or children[1]
    kNot,      // not children[0]
    kCond,     // children[1] if children[0] else children[2] (null = undefined)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> children;
  KwArgs kwargs;
  std::vector<std::string> ops;
  bool negated = false;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind {
    kText,       // text
    kOutput,     // {{ expr }}
    kIf,         // branches (cond, body)..., else_body
    kFor,        // for targets in expr [if cond]: body, else_body
    kSet,        // targets = expr, or ns.attr = expr when attr is set (targets[0] = ns)
    kSetBlock,   // targets[0] = body | filter
    kMacro,      // name = targets[0], params, body
    kCallBlock,  // expr = the call, params = caller's params, body = caller's body
    kBreak,
    kContinue,
    kFilterBlock,  // body | filter
    kWith,         // params = assignments, body
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  ExprPtr filter;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::vector<std::string> targets;
  std::string attr;
  KwArgs params;  // name -> default (null = required)
};

}  // namespace paddock::jinja
