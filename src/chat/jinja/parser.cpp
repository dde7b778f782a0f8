#include "chat/jinja/parser.h"

#include <cerrno>
#include <cstdlib>

#include "chat/jinja/error.h"

namespace paddock::jinja {
namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& toks, int max_depth) : toks_(toks), max_depth_(max_depth) {}

  Body parse_template() {
    Body body = parse_body({});
    if (peek().kind != TokenKind::kEof) fail(std::string("unexpected '") + peek().text + "'");
    return body;
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > p_.max_depth_) p_.fail("template nesting too deep");
    }
    ~DepthGuard() { --p_.depth_; }
    Parser& p_;
  };

  const Token& peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw TemplateError(ErrorKind::kSyntax, msg, peek().line);
  }

  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kOp && peek(ahead).text == op;
  }
  bool is_name(const char* n, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kName && peek(ahead).text == n;
  }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  void expect_op(const char* op) {
    if (!skip_op(op))
      fail(std::string("expected '") + op + std::string("', found '") + describe(peek()) + "'");
  }
  void expect_block_end() {
    if (peek().kind != TokenKind::kBlockEnd)
      fail(std::string("expected end of statement block, found '") + describe(peek()) + "'");
    next();
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kEof: return "end of template";
      case TokenKind::kBlockEnd: return "end of statement block";
      case TokenKind::kVarEnd: return "end of print statement";
      default: return t.text;
    }
  }
  std::string expect_name() {
    if (peek().kind != TokenKind::kName)
      fail(std::string("expected a name, found '") + describe(peek()) + "'");
    return next().text;
  }

  ExprPtr make(Expr::Kind k, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    return e;
  }

  // Statements until a block tag whose name is in `ends` (left unconsumed, after `{%`).
  Body parse_body(const std::vector<std::string>& ends) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == TokenKind::kEof) {
        if (!ends.empty()) fail(std::string("unexpected end of template, expected '") + ends.front() + "'");
        return body;
      }
      if (t.kind == TokenKind::kText) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kText;
        s->line = t.line;
        s->text = next().text;
        body.push_back(std::move(s));
      } else if (t.kind == TokenKind::kVarBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kOutput;
        s->line = t.line;
        s->expr = parse_tuple();
        if (peek().kind != TokenKind::kVarEnd)
          fail(std::string("expected end of print statement, found '") + describe(peek()) + "'");
        next();
        body.push_back(std::move(s));
      } else if (t.kind == TokenKind::kBlockBegin) {
        const Token& tag = peek(1);
        if (tag.kind == TokenKind::kName) {
          for (const auto& e : ends)
            if (tag.text == e) return body;
        }
        next();
        body.push_back(parse_statement(ends));
      } else {
        fail(std::string("unexpected '") + describe(t) + "'");
      }
    }
  }

  // Consumes `{% name` of an end/middle tag already seen by parse_body.
  void consume_tag(const char* name) {
    next();  // {%
    if (!skip_name(name)) fail(std::string("expected '") + name + "'");
  }

  std::unique_ptr<Stmt> parse_statement(const std::vector<std::string>& ends) {
    const Token& t = peek();
    if (t.kind != TokenKind::kName) fail("tag name expected");
    const std::string tag = next().text;
    auto s = std::make_unique<Stmt>();
    s->line = t.line;
    if (tag == "if") {
      s->kind = Stmt::Kind::kIf;
      ExprPtr cond = parse_tuple();
      expect_block_end();
      while (true) {
        Body b = parse_body({"elif", "else", "endif"});
        s->branches.emplace_back(std::move(cond), std::move(b));
        if (is_name("elif", 1)) {
          consume_tag("elif");
          cond = parse_tuple();
          expect_block_end();
          continue;
        }
        if (is_name("else", 1)) {
          consume_tag("else");
          expect_block_end();
          s->else_body = parse_body({"endif"});
        }
        consume_tag("endif");
        break;
      }
    } else if (tag == "for") {
      s->kind = Stmt::Kind::kFor;
      do {
        s->targets.push_back(expect_name());
      } while (skip_op(","));
      if (!skip_name("in")) fail("expected 'in' in for loop");
      s->expr = parse_tuple(/*with_condexpr=*/false);
      if (skip_name("if")) s->cond = parse_expression();
      if (skip_name("recursive")) fail("recursive for loops are not supported");
      expect_block_end();
      s->body = parse_body({"endfor", "else"});
      if (is_name("else", 1)) {
        consume_tag("else");
        expect_block_end();
        s->else_body = parse_body({"endfor"});
      }
      consume_tag("endfor");
    } else if (tag == "set") {
      const std::string first = expect_name();
      s->targets.push_back(first);
      if (skip_op(".")) {
        s->kind = Stmt::Kind::kSet;
        s->attr = expect_name();
      } else {
        while (skip_op(",")) s->targets.push_back(expect_name());
      }
      if (skip_op("=")) {
        s->kind = Stmt::Kind::kSet;
        s->expr = parse_tuple();
      } else {
        if (!s->attr.empty() || s->targets.size() != 1) fail("expected '='");
        s->kind = Stmt::Kind::kSetBlock;
        if (is_op("|")) s->filter = parse_filter_chain(nullptr);
        expect_block_end();
        s->body = parse_body({"endset"});
        consume_tag("endset");
      }
    } else if (tag == "macro") {
      s->kind = Stmt::Kind::kMacro;
      s->targets.push_back(expect_name());
      parse_params(s->params);
      expect_block_end();
      s->body = parse_body({"endmacro"});
      consume_tag("endmacro");
      if (peek().kind == TokenKind::kName && peek().text == s->targets[0]) next();
    } else if (tag == "call") {
      s->kind = Stmt::Kind::kCallBlock;
      if (is_op("(")) parse_params(s->params);
      s->expr = parse_expression();
      if (s->expr->kind != Expr::Kind::kCall) fail("expected call");
      expect_block_end();
      s->body = parse_body({"endcall"});
      consume_tag("endcall");
    } else if (tag == "break" || tag == "continue") {
      s->kind = tag == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue;
    } else if (tag == "filter") {
      s->kind = Stmt::Kind::kFilterBlock;
      s->filter = parse_filter_chain(nullptr, /*first_without_pipe=*/true);
      expect_block_end();
      s->body = parse_body({"endfilter"});
      consume_tag("endfilter");
    } else if (tag == "with") {
      s->kind = Stmt::Kind::kWith;
      while (peek().kind != TokenKind::kBlockEnd) {
        if (!s->params.empty()) expect_op(",");
        std::string name = expect_name();
        expect_op("=");
        s->params.emplace_back(std::move(name), parse_expression());
      }
      expect_block_end();
      s->body = parse_body({"endwith"});
      consume_tag("endwith");
    } else {
      std::string msg = "Encountered unknown tag '" + tag + "'.";
      if (!ends.empty())
        msg += std::string(" Jinja was looking for the following tags: '") + ends.front() + "'.";
      throw TemplateError(ErrorKind::kSyntax, msg, t.line);
    }
    expect_block_end();  // of the statement itself, or of its end tag
    return s;
  }

  void parse_params(KwArgs& params) {
    expect_op("(");
    while (!skip_op(")")) {
      if (!params.empty()) expect_op(",");
      if (skip_op(")")) break;
      std::string name = expect_name();
      ExprPtr def;
      if (skip_op("=")) def = parse_expression();
      params.emplace_back(std::move(name), std::move(def));
    }
  }

  // A comma-separated expression list becomes a tuple (`{{ a, b }}`, `set x = 1, 2`).
  ExprPtr parse_tuple(bool with_condexpr = true) {
    const int line = peek().line;
    ExprPtr first = with_condexpr ? parse_expression() : parse_or();
    if (!is_op(",")) return first;
    auto t = make(Expr::Kind::kTuple, line);
    t->children.push_back(std::move(first));
    while (skip_op(",")) {
      if (peek().kind == TokenKind::kBlockEnd || peek().kind == TokenKind::kVarEnd || is_name("if")) break;
      t->children.push_back(with_condexpr ? parse_expression() : parse_or());
    }
    return t;
  }

  ExprPtr parse_expression() {
    DepthGuard guard(*this);
    const int line = peek().line;
    ExprPtr e = parse_or();
    while (is_name("if")) {
      next();
      auto c = make(Expr::Kind::kCond, line);
      ExprPtr cond = parse_or();
      ExprPtr other;
      if (skip_name("else")) other = parse_expression();
      c->children.push_back(std::move(cond));
      c->children.push_back(std::move(e));
      c->children.push_back(std::move(other));
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(Expr::Kind k, ExprPtr l, ExprPtr r, int line, std::string op = {}) {
    auto e = make(k, line);
    e->name = std::move(op);
    e->children.push_back(std::move(l));
    e->children.push_back(std::move(r));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (is_name("or")) {
      const int line = next().line;
      e = binary(Expr::Kind::kOr, std::move(e), parse_and(), line);
    }
    return e;
  }

  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (is_name("and")) {
      const int line = next().line;
      e = binary(Expr::Kind::kAnd, std::move(e), parse_not(), line);
    }
    return e;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(*this);
      auto e = make(Expr::Kind::kNot, next().line);
      e->children.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = peek().line;
    ExprPtr first = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (peek().kind == TokenKind::kOp &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" || peek().text == ">" ||
           peek().text == "<=" || peek().text == ">=")) {
        op = next().text;
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "notin";
      } else {
        break;
      }
      if (!cmp) {
        cmp = make(Expr::Kind::kCompare, line);
        cmp->children.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->children.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }

  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      e = binary(Expr::Kind::kBinary, std::move(e), parse_concat(), t.line, t.text);
    }
    return e;
  }

  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    while (is_op("~")) {
      const int line = next().line;
      e = binary(Expr::Kind::kBinary, std::move(e), parse_math2(), line, "~");
    }
    return e;
  }

  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      e = binary(Expr::Kind::kBinary, std::move(e), parse_pow(), t.line, t.text);
    }
    return e;
  }

  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (is_op("**")) {
      const int line = next().line;
      e = binary(Expr::Kind::kBinary, std::move(e), parse_unary(true), line, "**");
    }
    return e;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      e = make(t.text == "-" ? Expr::Kind::kNeg : Expr::Kind::kPos, t.line);
      e->children.push_back(parse_unary(false));
    } else {
      e = parse_postfix(parse_primary());
    }
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::kName: {
        next();
        auto e = make(Expr::Kind::kLiteral, t.line);
        if (t.text == "true" || t.text == "True") {
          e->value = Value(true);
        } else if (t.text == "false" || t.text == "False") {
          e->value = Value(false);
        } else if (t.text == "none" || t.text == "None") {
          e->value = Value::none();
        } else {
          e->kind = Expr::Kind::kName;
          e->name = t.text;
        }
        return e;
      }
      case TokenKind::kString: {
        std::string s = next().text;
        while (peek().kind == TokenKind::kString) s += next().text;
        auto e = make(Expr::Kind::kLiteral, t.line);
        e->value = Value(std::move(s));
        return e;
      }
      case TokenKind::kInt: {
        next();
        auto e = make(Expr::Kind::kLiteral, t.line);
        errno = 0;
        const long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        if (errno == ERANGE)
          throw TemplateError(ErrorKind::kSyntax, "integer literal too large: " + t.text, t.line);
        e->value = Value(static_cast<int64_t>(v));
        return e;
      }
      case TokenKind::kFloat: {
        next();
        auto e = make(Expr::Kind::kLiteral, t.line);
        e->value = Value(std::strtod(t.text.c_str(), nullptr));
        return e;
      }
      case TokenKind::kOp:
        if (t.text == "(") {
          next();
          if (skip_op(")")) return make(Expr::Kind::kTuple, t.line);
          ExprPtr e = parse_expression();
          if (is_op(",")) {
            auto tup = make(Expr::Kind::kTuple, t.line);
            tup->children.push_back(std::move(e));
            while (skip_op(",")) {
              if (is_op(")")) break;
              tup->children.push_back(parse_expression());
            }
            e = std::move(tup);
          }
          expect_op(")");
          return e;
        }
        if (t.text == "[") {
          next();
          auto e = make(Expr::Kind::kList, t.line);
          while (!skip_op("]")) {
            if (!e->children.empty()) expect_op(",");
            if (skip_op("]")) break;
            e->children.push_back(parse_expression());
          }
          return e;
        }
        if (t.text == "{") {
          next();
          auto e = make(Expr::Kind::kDict, t.line);
          while (!skip_op("}")) {
            if (!e->children.empty()) expect_op(",");
            if (skip_op("}")) break;
            e->children.push_back(parse_expression());
            expect_op(":");
            e->children.push_back(parse_expression());
          }
          return e;
        }
        break;
      default: break;
    }
    fail(std::string("unexpected '") + describe(t) + "'");
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      const int line = peek().line;
      if (is_op(".")) {
        next();
        auto a = make(Expr::Kind::kAttr, line);
        if (peek().kind == TokenKind::kInt) {
          a->kind = Expr::Kind::kItem;
          a->children.push_back(std::move(e));
          auto idx = make(Expr::Kind::kLiteral, line);
          idx->value = Value(static_cast<int64_t>(std::strtoll(next().text.c_str(), nullptr, 10)));
          a->children.push_back(std::move(idx));
        } else {
          a->name = expect_name();
          a->children.push_back(std::move(e));
        }
        e = std::move(a);
      } else if (is_op("[")) {
        next();
        e = parse_subscript(std::move(e), line);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, int line) {
    ExprPtr parts[3];
    int n = 0;
    bool is_slice = false;
    while (true) {
      if (is_op(":")) {
        next();
        is_slice = true;
        if (++n > 2) fail("invalid slice");
        continue;
      }
      if (is_op("]")) break;
      if (parts[n]) fail("expected ']' in subscript");
      parts[n] = parse_expression();
    }
    expect_op("]");
    auto e = make(is_slice ? Expr::Kind::kSlice : Expr::Kind::kItem, line);
    e->children.push_back(std::move(obj));
    if (is_slice) {
      for (auto& p : parts) e->children.push_back(std::move(p));
    } else {
      if (!parts[0]) fail("expected subscript expression");
      e->children.push_back(std::move(parts[0]));
    }
    return e;
  }

  void parse_call_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!skip_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (skip_op(")")) break;
      if (peek().kind == TokenKind::kName && is_op("=", 1)) {
        std::string name = next().text;
        next();
        e.kwargs.emplace_back(std::move(name), parse_expression());
      } else {
        if (!e.kwargs.empty()) fail("positional argument after keyword argument");
        e.children.push_back(parse_expression());
      }
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto e = make(Expr::Kind::kCall, peek().line);
    e->children.push_back(std::move(callee));
    parse_call_args(*e);
    return e;
  }

  // `| f(args) | g`; with a null operand this builds the chain for filter/set blocks.
  ExprPtr parse_filter_chain(ExprPtr operand, bool first_without_pipe = false) {
    bool first = true;
    while ((first && first_without_pipe) || is_op("|")) {
      if (!(first && first_without_pipe)) next();
      first = false;
      auto f = make(Expr::Kind::kFilter, peek().line);
      f->name = expect_name();
      while (is_op(".")) {
        next();
        f->name += '.';
        f->name += expect_name();
      }
      f->children.push_back(std::move(operand));
      if (is_op("(")) parse_call_args(*f);
      operand = std::move(f);
    }
    return operand;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        e = parse_filter_chain(std::move(e));
      } else if (is_name("is")) {
        e = parse_test(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_test(ExprPtr operand) {
    auto t = make(Expr::Kind::kTest, next().line);
    if (skip_name("not")) t->negated = true;
    t->name = expect_name();
    t->children.push_back(std::move(operand));
    if (is_op("(")) {
      parse_call_args(*t);
    } else {
      const Token& a = peek();
      const bool arg_start =
          a.kind == TokenKind::kString || a.kind == TokenKind::kInt || a.kind == TokenKind::kFloat ||
          (a.kind == TokenKind::kName && a.text != "else" && a.text != "or" && a.text != "and" &&
           a.text != "if" && a.text != "is" && a.text != "in" && a.text != "not") ||
          (a.kind == TokenKind::kOp && (a.text == "[" || a.text == "{"));
      if (arg_start) t->children.push_back(parse_postfix(parse_primary()));
    }
    return t;
  }

  const std::vector<Token>& toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int max_depth_;
};

}  // namespace

Body parse(const std::vector<Token>& tokens, int max_depth) {
  return Parser(tokens, max_depth).parse_template();
}

}  // namespace paddock::jinja
