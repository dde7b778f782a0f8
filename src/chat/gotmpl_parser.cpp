// Lexer and recursive-descent parser for Go's text/template syntax (see gotmpl_ast.h).
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "chat/gotmpl_ast.h"
#include "chat/utf8.h"

namespace paddock::chat {

namespace {

constexpr int kMaxNesting = 200;  // bounds parser recursion on hostile input

enum class Tok {
  kEof,
  kRightDelim,
  kField,
  kDot,
  kVariable,
  kIdentifier,
  kKeyword,
  kLiteral,  // string, raw string, char, number, bool
  kNil,
  kPipe,
  kLeftParen,
  kRightParen,
  kDeclare,
  kAssign,
  kComma,
};

struct Token {
  Tok type = Tok::kEof;
  std::string text;  // identifier/keyword/field name (without '.'), variable with '$'
  Value value;       // literals
  bool space_before = false;
  int line = 1;
  int col = 1;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_alnum(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool is_keyword(std::string_view s) {
  return s == "if" || s == "else" || s == "end" || s == "range" || s == "with" || s == "define" ||
         s == "template" || s == "block" || s == "break" || s == "continue";
}

std::string describe(const Token& t) {
  switch (t.type) {
    case Tok::kEof: return "end of input";
    case Tok::kRightDelim: return "\"}}\"";
    case Tok::kField: return "field ." + t.text;
    case Tok::kDot: return "\".\"";
    case Tok::kVariable: return "variable " + t.text;
    case Tok::kIdentifier: return "identifier " + t.text;
    case Tok::kKeyword: return "<" + t.text + ">";
    case Tok::kLiteral: return "literal " + go_print(t.value);
    case Tok::kNil: return "nil";
    case Tok::kPipe: return "\"|\"";
    case Tok::kLeftParen: return "\"(\"";
    case Tok::kRightParen: return "\")\"";
    case Tok::kDeclare: return "\":=\"";
    case Tok::kAssign: return "\"=\"";
    case Tok::kComma: return "\",\"";
  }
  return "token";
}

class Parser {
 public:
  Parser(std::string_view src, const std::function<bool(std::string_view)>& is_function)
      : src_(src), is_function_(is_function) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  Result<ParsedTemplate> run() {
    auto root = std::make_shared<Node>();
    root->kind = NodeKind::kList;
    vars_ = {"$"};
    std::string stop;
    PADDOCK_TRY(parse_list(root.get(), /*top=*/true, &stop));
    out_.root = root;
    return std::move(out_);
  }

 private:
  // ---- errors and positions ----
  Status err_at(int line, int col, const std::string& msg) const {
    return invalid_argument("template: " + std::to_string(line) + ":" + std::to_string(col) + ": " + msg);
  }
  Status err(const Token& t, const std::string& msg) const { return err_at(t.line, t.col, msg); }
  void pos_of(size_t off, int* line, int* col) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), off);
    const size_t idx = static_cast<size_t>(it - line_starts_.begin()) - 1;
    *line = static_cast<int>(idx + 1);
    *col = static_cast<int>(off - line_starts_[idx] + 1);
  }

  // ---- text level: text runs, delimiters, comments ----

  // Reads text up to the next action, appends it to `list` and consumes the opening
  // delimiter (with trim marker). Returns false at end of input.
  Result<bool> next_action(Node* list) {
    const size_t open = src_.find("{{", pos_);
    std::string_view text =
        src_.substr(pos_, open == std::string_view::npos ? std::string_view::npos : open - pos_);
    if (trim_next_text_) {
      size_t k = 0;
      while (k < text.size() && is_space(text[k])) ++k;
      text.remove_prefix(k);
      trim_next_text_ = false;
    }
    size_t after = open == std::string_view::npos ? src_.size() : open + 2;
    if (open != std::string_view::npos && after + 1 < src_.size() && src_[after] == '-' &&
        is_space(src_[after + 1])) {
      while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
      after += 2;
    }
    if (!text.empty()) {
      auto n = std::make_shared<Node>();
      n->kind = NodeKind::kText;
      n->text = std::string(text);
      list->nodes.push_back(n);
    }
    if (open == std::string_view::npos) {
      pos_ = src_.size();
      return false;
    }
    pos_ = after;
    // A comment must fill the whole action.
    size_t p = pos_;
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (src_.substr(p, 2) == "/*" && (p == pos_ || src_.substr(open + 2, 1) == "-")) {
      const size_t close = src_.find("*/", p + 2);
      if (close == std::string_view::npos) {
        int l, c;
        pos_of(open, &l, &c);
        return err_at(l, c, "unclosed comment");
      }
      size_t q = close + 2;
      if (src_.substr(q, 4).size() == 4 && is_space(src_[q]) && src_.substr(q + 1, 3) == "-}}") {
        trim_next_text_ = true;
        q += 4;
      } else if (src_.substr(q, 2) == "}}") {
        q += 2;
      } else {
        int l, c;
        pos_of(close, &l, &c);
        return err_at(l, c, "comment ends before closing delimiter");
      }
      pos_ = q;
      return next_action(list);
    }
    have_peek_ = false;
    return true;
  }

  // ---- tokens inside an action ----
  Result<Token> lex() {
    Token t;
    size_t p = pos_;
    while (p < src_.size() && is_space(src_[p])) {
      // " -}}" closes the action and trims the following text.
      if (src_.substr(p + 1, 3) == "-}}") {
        pos_of(p, &t.line, &t.col);
        t.type = Tok::kRightDelim;
        pos_ = p + 4;
        trim_next_text_ = true;
        return t;
      }
      ++p;
    }
    t.space_before = p != pos_;
    pos_of(p, &t.line, &t.col);
    pos_ = p;
    if (p >= src_.size()) return err(t, "unclosed action");
    const char c = src_[p];
    if (src_.substr(p, 2) == "}}") {
      t.type = Tok::kRightDelim;
      pos_ = p + 2;
      return t;
    }
    auto take = [&](Tok type, size_t n) {
      t.type = type;
      pos_ = p + n;
      return t;
    };
    switch (c) {
      case '|': return take(Tok::kPipe, 1);
      case '(': return take(Tok::kLeftParen, 1);
      case ')': return take(Tok::kRightParen, 1);
      case ',': return take(Tok::kComma, 1);
      case '=': return take(Tok::kAssign, 1);
      case ':':
        if (src_.substr(p, 2) == ":=") return take(Tok::kDeclare, 2);
        return err(t, "expected :=");
      case '"':
      case '`':
      case '\'': return lex_quoted(t, p);
      default: break;
    }
    if (c == '.' && !(p + 1 < src_.size() && src_[p + 1] >= '0' && src_[p + 1] <= '9')) {
      size_t q = p + 1;
      while (q < src_.size() && is_alnum(src_[q])) ++q;
      if (q == p + 1) return take(Tok::kDot, 1);
      t.text = std::string(src_.substr(p + 1, q - p - 1));
      return take(Tok::kField, q - p);
    }
    if (c == '$') {
      size_t q = p + 1;
      while (q < src_.size() && is_alnum(src_[q])) ++q;
      t.text = std::string(src_.substr(p, q - p));
      return take(Tok::kVariable, q - p);
    }
    if ((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+') return lex_number(t, p);
    if (is_alnum(c)) {
      size_t q = p;
      while (q < src_.size() && is_alnum(src_[q])) ++q;
      t.text = std::string(src_.substr(p, q - p));
      if (t.text == "true" || t.text == "false") {
        t.value = Value(t.text == "true");
        return take(Tok::kLiteral, q - p);
      }
      if (t.text == "nil") return take(Tok::kNil, q - p);
      return take(is_keyword(t.text) ? Tok::kKeyword : Tok::kIdentifier, q - p);
    }
    return err(t, "unrecognized character in action: " + go_quote(std::string(1, c)));
  }

  Result<Token> lex_number(Token t, size_t p) {
    size_t q = p;
    if (src_[q] == '-' || src_[q] == '+') ++q;
    while (q < src_.size() &&
           (is_alnum(src_[q]) || src_[q] == '.' ||
            ((src_[q] == '-' || src_[q] == '+') && q > p &&
             (src_[q - 1] == 'e' || src_[q - 1] == 'E' || src_[q - 1] == 'p' || src_[q - 1] == 'P')))) {
      ++q;
    }
    std::string raw(src_.substr(p, q - p));
    std::string s;
    for (char ch : raw)
      if (ch != '_') s.push_back(ch);
    pos_ = q;
    t.type = Tok::kLiteral;
    const bool neg = !s.empty() && s[0] == '-';
    std::string body = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? s.substr(1) : s;
    const bool hex = body.size() > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X');
    const bool floaty = !hex && body.find_first_of(".eE") != std::string::npos;
    if (!floaty) {
      int base = 10;
      std::string digits = body;
      if (body.size() > 1 && body[0] == '0') {
        const char b = static_cast<char>(body[1] | 0x20);
        if (b == 'x')
          base = 16, digits = body.substr(2);
        else if (b == 'o')
          base = 8, digits = body.substr(2);
        else if (b == 'b')
          base = 2, digits = body.substr(2);
        else
          base = 8, digits = body.substr(1);
      }
      char* end = nullptr;
      errno = 0;
      const long long v = digits.empty() ? 0 : std::strtoll(digits.c_str(), &end, base);
      if (digits.empty() || *end != '\0' || errno != 0) return err(t, "bad number syntax: \"" + raw + "\"");
      t.value = Value(static_cast<int64_t>(neg ? -v : v));
      return t;
    }
    char* end = nullptr;
    const double v = std::strtod(body.c_str(), &end);
    if (body.empty() || *end != '\0') return err(t, "bad number syntax: \"" + raw + "\"");
    t.value = Value(neg ? -v : v);
    return t;
  }

  Result<Token> lex_quoted(Token t, size_t p) {
    const char q = src_[p];
    size_t i = p + 1;
    std::string out;
    if (q == '`') {
      const size_t close = src_.find('`', i);
      if (close == std::string_view::npos) return err(t, "unterminated raw quoted string");
      for (char ch : src_.substr(i, close - i))
        if (ch != '\r') out.push_back(ch);
      pos_ = close + 1;
      t.type = Tok::kLiteral;
      t.value = Value(std::move(out));
      return t;
    }
    while (true) {
      if (i >= src_.size() || src_[i] == '\n') {
        return err(t, q == '"' ? "unterminated quoted string" : "unterminated character constant");
      }
      const char ch = src_[i];
      if (ch == q) break;
      if (ch != '\\') {
        out.push_back(ch);
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) return err(t, "unterminated quoted string");
      const char e = src_[i + 1];
      i += 2;
      auto hex_digits = [&](int n) -> long {
        if (i + static_cast<size_t>(n) > src_.size()) return -1;
        long v = 0;
        for (int k = 0; k < n; ++k) {
          const char h = src_[i + static_cast<size_t>(k)];
          int d = (h >= '0' && h <= '9')   ? h - '0'
                  : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                           : -1;
          if (d < 0) return -1;
          v = v * 16 + d;
        }
        i += static_cast<size_t>(n);
        return v;
      };
      switch (e) {
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'v': out.push_back('\v'); break;
        case '\\': out.push_back('\\'); break;
        case '"':
        case '\'':
          if (e != q) return err(t, "invalid escape in quoted string");
          out.push_back(e);
          break;
        case 'x': {
          const long v = hex_digits(2);
          if (v < 0) return err(t, "invalid \\x escape");
          out.push_back(static_cast<char>(v));
          break;
        }
        case 'u':
        case 'U': {
          const long v = hex_digits(e == 'u' ? 4 : 8);
          if (v < 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return err(t, "invalid unicode escape");
          append_utf8(&out, static_cast<int32_t>(v));
          break;
        }
        default:
          if (e >= '0' && e <= '7' && i + 1 < src_.size() && src_[i] >= '0' && src_[i] <= '7' &&
              src_[i + 1] >= '0' && src_[i + 1] <= '7') {
            const int v = (e - '0') * 64 + (src_[i] - '0') * 8 + (src_[i + 1] - '0');
            if (v > 255) return err(t, "invalid octal escape");
            out.push_back(static_cast<char>(v));
            i += 2;
            break;
          }
          return err(t, "invalid escape \\" + std::string(1, e) + " in quoted string");
      }
    }
    pos_ = i + 1;
    t.type = Tok::kLiteral;
    if (q == '\'') {
      size_t k = 0;
      const int32_t r = out.empty() ? kRuneError : decode_utf8(out, &k);
      if (r == kRuneError || k != out.size()) return err(t, "malformed character constant");
      t.value = Value(static_cast<int64_t>(r));
    } else {
      t.value = Value(std::move(out));
    }
    return t;
  }

  Result<Token> peek() {
    if (!have_peek_) {
      PADDOCK_ASSIGN(peek_, lex());
      have_peek_ = true;
    }
    return peek_;
  }
  Result<Token> next() {
    PADDOCK_ASSIGN(Token t, peek());
    have_peek_ = false;
    return t;
  }
  Status expect(Tok type, const std::string& context) {
    PADDOCK_ASSIGN(Token t, next());
    if (t.type != type) return err(t, "unexpected " + describe(t) + " in " + context);
    return Status::ok();
  }

  // ---- statements ----

  // Parses items until end of input (top) or {{end}}/{{else}} (then *stop says which, and
  // for else the tokens after "else" are left unread).
  Status parse_list(Node* list, bool top, std::string* stop) {
    if (++depth_ > kMaxNesting) return err_at(1, 1, "template nesting too deep");
    while (true) {
      PADDOCK_ASSIGN(bool more, next_action(list));
      if (!more) {
        --depth_;
        if (!top) {
          int l, c;
          pos_of(src_.size(), &l, &c);
          return err_at(l, c, "unexpected EOF");
        }
        return Status::ok();
      }
      PADDOCK_ASSIGN(Token t, peek());
      if (t.type == Tok::kKeyword && (t.text == "end" || t.text == "else")) {
        (void)next();
        if (top) return err(t, "unexpected {{" + t.text + "}}");
        if (t.text == "end") PADDOCK_TRY(expect(Tok::kRightDelim, "end"));
        *stop = t.text;
        --depth_;
        return Status::ok();
      }
      if (t.type == Tok::kKeyword && (t.text == "define")) {
        if (!top || depth_ != 1) return err(t, "unexpected <define> in command");
        (void)next();
        PADDOCK_TRY(parse_define(/*block=*/false, list));
        continue;
      }
      PADDOCK_TRY(parse_statement(list));
    }
  }

  Status parse_statement(Node* list) {
    PADDOCK_ASSIGN(Token t, next());
    if (t.type == Tok::kKeyword) {
      if (t.text == "if" || t.text == "with")
        return parse_control(t, t.text == "if" ? NodeKind::kIf : NodeKind::kWith, list);
      if (t.text == "range") return parse_control(t, NodeKind::kRange, list);
      if (t.text == "template") return parse_template(t, list);
      if (t.text == "block") return parse_define(/*block=*/true, list);
      if (t.text == "break" || t.text == "continue") {
        if (range_depth_ == 0) return err(t, "{{" + t.text + "}} outside {{range}}");
        PADDOCK_TRY(expect(Tok::kRightDelim, t.text));
        auto n = std::make_shared<Node>();
        n->kind = t.text == "break" ? NodeKind::kBreak : NodeKind::kContinue;
        n->line = t.line, n->col = t.col;
        list->nodes.push_back(n);
        return Status::ok();
      }
      return err(t, "unexpected <" + t.text + ">");
    }
    have_peek_ = true;
    peek_ = t;
    auto n = std::make_shared<Node>();
    n->kind = NodeKind::kAction;
    n->line = t.line, n->col = t.col;
    PADDOCK_ASSIGN(n->pipe, parse_pipeline("command", /*allow_decl=*/true, Tok::kRightDelim));
    list->nodes.push_back(n);
    return Status::ok();
  }

  Status parse_control(const Token& kw, NodeKind kind, Node* list) {
    const size_t mark = vars_.size();
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->line = kw.line, n->col = kw.col;
    PADDOCK_ASSIGN(n->pipe, parse_pipeline(kw.text, /*allow_decl=*/true, Tok::kRightDelim));
    if (kind == NodeKind::kRange) ++range_depth_;
    auto body = std::make_shared<Node>();
    std::string stop;
    PADDOCK_TRY(parse_list(body.get(), false, &stop));
    if (kind == NodeKind::kRange) --range_depth_;
    n->list = body;
    if (stop == "else") {
      PADDOCK_ASSIGN(Token t, peek());
      auto else_list = std::make_shared<Node>();
      const bool chained = kind != NodeKind::kRange && t.type == Tok::kKeyword &&
                           (t.text == "if" || (t.text == "with" && kind == NodeKind::kWith));
      if (chained) {
        // {{else if X}} is {{else}}{{if X}} whose {{end}} also ends this control.
        (void)next();
        PADDOCK_TRY(parse_control(t, t.text == "if" ? NodeKind::kIf : NodeKind::kWith, else_list.get()));
      } else {
        PADDOCK_TRY(expect(Tok::kRightDelim, "else"));
        std::string stop2;
        PADDOCK_TRY(parse_list(else_list.get(), false, &stop2));
        if (stop2 != "end") return err(t, "expected end; found {{else}}");
      }
      n->else_list = else_list;
    }
    vars_.resize(mark);
    list->nodes.push_back(n);
    return Status::ok();
  }

  Status parse_template(const Token& kw, Node* list) {
    PADDOCK_ASSIGN(Token name, next());
    if (name.type != Tok::kLiteral || name.value.kind() != Value::Kind::kString) {
      return err(name, "unexpected " + describe(name) + " in template clause");
    }
    auto n = std::make_shared<Node>();
    n->kind = NodeKind::kTemplate;
    n->line = kw.line, n->col = kw.col;
    n->text = name.value.as_string();
    PADDOCK_ASSIGN(Token t, peek());
    if (t.type != Tok::kRightDelim) {
      PADDOCK_ASSIGN(n->pipe, parse_pipeline("template clause", false, Tok::kRightDelim));
    } else {
      (void)next();
    }
    list->nodes.push_back(n);
    return Status::ok();
  }

  // {{define "name"}}...{{end}} or {{block "name" pipeline}}...{{end}}.
  Status parse_define(bool block, Node* list) {
    PADDOCK_ASSIGN(Token name, next());
    if (name.type != Tok::kLiteral || name.value.kind() != Value::Kind::kString) {
      return err(name, std::string("unexpected ") + describe(name) +
                           (block ? " in block clause" : " in define clause"));
    }
    NodePtr pipe;
    if (block) {
      PADDOCK_ASSIGN(pipe, parse_pipeline("block clause", false, Tok::kRightDelim));
    } else {
      PADDOCK_TRY(expect(Tok::kRightDelim, "define clause"));
    }
    // A definition sees only its own `$`.
    std::vector<std::string> saved = std::move(vars_);
    const int saved_range = range_depth_;
    vars_ = {"$"};
    range_depth_ = 0;
    auto body = std::make_shared<Node>();
    std::string stop;
    PADDOCK_TRY(parse_list(body.get(), false, &stop));
    if (stop != "end") return err(name, "unexpected {{else}} in " + std::string(block ? "block" : "define"));
    vars_ = std::move(saved);
    range_depth_ = saved_range;
    out_.defines[name.value.as_string()] = body;
    if (block) {
      auto n = std::make_shared<Node>();
      n->kind = NodeKind::kTemplate;
      n->line = name.line, n->col = name.col;
      n->text = name.value.as_string();
      n->pipe = pipe;
      list->nodes.push_back(n);
    }
    return Status::ok();
  }

  // ---- pipelines ----
  Result<NodePtr> parse_pipeline(const std::string& context, bool allow_decl, Tok end) {
    if (++depth_ > kMaxNesting) return err_at(1, 1, "template nesting too deep");
    auto pipe = std::make_shared<Node>();
    pipe->kind = NodeKind::kPipe;
    PADDOCK_ASSIGN(Token first, peek());
    pipe->line = first.line, pipe->col = first.col;
    if (allow_decl && first.type == Tok::kVariable) {
      // Look ahead for `$x :=`, `$x =` or `$i, $v :=` without consuming operands.
      const size_t save_pos = pos_;
      const bool save_trim = trim_next_text_;
      (void)next();
      PADDOCK_ASSIGN(Token t2, peek());
      std::vector<std::string> names = {first.text};
      bool decl = false;
      if (t2.type == Tok::kDeclare || t2.type == Tok::kAssign) {
        (void)next();
        decl = true;
        pipe->is_assign = t2.type == Tok::kAssign;
      } else if (t2.type == Tok::kComma && context == "range") {
        (void)next();
        PADDOCK_ASSIGN(Token v2, next());
        if (v2.type != Tok::kVariable) return err(v2, "range can only initialize variables");
        PADDOCK_ASSIGN(Token op, next());
        if (op.type != Tok::kDeclare && op.type != Tok::kAssign)
          return err(op, "expected := or = after range variables");
        pipe->is_assign = op.type == Tok::kAssign;
        names.push_back(v2.text);
        decl = true;
      }
      if (decl) {
        for (const std::string& v : names) {
          if (pipe->is_assign) {
            if (!has_var(v)) return err(first, "undefined variable \"" + v + "\"");
          } else {
            vars_.push_back(v);
          }
        }
        pipe->decl = names;
      } else {
        pos_ = save_pos;
        trim_next_text_ = save_trim;
        have_peek_ = true;
        peek_ = first;
      }
    }
    while (true) {
      PADDOCK_ASSIGN(Token t, peek());
      if (t.type == end) {
        (void)next();
        break;
      }
      if (t.type == Tok::kRightDelim || t.type == Tok::kRightParen || t.type == Tok::kEof) {
        return err(t, "unexpected " + describe(t) + " in " + context);
      }
      PADDOCK_ASSIGN(NodePtr cmd, parse_command(context, end));
      pipe->nodes.push_back(cmd);
      PADDOCK_ASSIGN(Token sep, peek());
      if (sep.type == Tok::kPipe) {
        (void)next();
        PADDOCK_ASSIGN(Token after, peek());
        if (after.type == end) return err(after, "missing command after \"|\" in " + context);
      } else if (sep.type != end) {
        return err(sep, "unexpected " + describe(sep) + " in " + context);
      }
    }
    if (pipe->nodes.empty()) return err_at(pipe->line, pipe->col, "missing value for " + context);
    // Go: non-executable values may only start a pipeline.
    for (size_t i = 1; i < pipe->nodes.size(); ++i) {
      const Node& a0 = *pipe->nodes[i]->nodes[0];
      if (a0.kind == NodeKind::kLiteral || a0.kind == NodeKind::kNil || a0.kind == NodeKind::kDot) {
        return err_at(a0.line, a0.col, "non executable command in pipeline stage " + std::to_string(i + 1));
      }
    }
    --depth_;
    return NodePtr(pipe);
  }

  Result<NodePtr> parse_command(const std::string& context, Tok end) {
    auto cmd = std::make_shared<Node>();
    cmd->kind = NodeKind::kCommand;
    while (true) {
      PADDOCK_ASSIGN(Token t, peek());
      if (t.type == end || t.type == Tok::kPipe) break;
      if (!cmd->nodes.empty() && !t.space_before) {
        return err(t, "missing space before " + describe(t) + " in " + context);
      }
      PADDOCK_ASSIGN(NodePtr op, parse_operand(context));
      cmd->nodes.push_back(op);
    }
    if (cmd->nodes.empty()) {
      PADDOCK_ASSIGN(Token t, peek());
      return err(t, "empty command");
    }
    cmd->line = cmd->nodes[0]->line, cmd->col = cmd->nodes[0]->col;
    return NodePtr(cmd);
  }

  Result<NodePtr> parse_operand(const std::string& context) {
    PADDOCK_ASSIGN(Token t, next());
    auto n = std::make_shared<Node>();
    n->line = t.line, n->col = t.col;
    switch (t.type) {
      case Tok::kField:
        n->kind = NodeKind::kField;
        n->idents.push_back(t.text);
        break;
      case Tok::kDot: n->kind = NodeKind::kDot; break;
      case Tok::kNil: n->kind = NodeKind::kNil; break;
      case Tok::kLiteral:
        n->kind = NodeKind::kLiteral;
        n->literal = t.value;
        break;
      case Tok::kVariable:
        if (!has_var(t.text)) return err(t, "undefined variable \"" + t.text + "\"");
        n->kind = NodeKind::kVariable;
        n->text = t.text;
        break;
      case Tok::kIdentifier:
        if (!is_function_(t.text)) return err(t, "function \"" + t.text + "\" not defined");
        n->kind = NodeKind::kIdentifier;
        n->text = t.text;
        break;
      case Tok::kLeftParen: {
        PADDOCK_ASSIGN(NodePtr inner, parse_pipeline("parenthesized pipeline", false, Tok::kRightParen));
        n->kind = NodeKind::kChain;
        n->pipe = inner;
        break;
      }
      default: return err(t, "unexpected " + describe(t) + " in " + context);
    }
    // Field chains bind without spaces: .A.B, $x.A, (pipe).A
    while (true) {
      PADDOCK_ASSIGN(Token f, peek());
      if (f.type != Tok::kField || f.space_before) break;
      (void)next();
      if (n->kind == NodeKind::kLiteral || n->kind == NodeKind::kNil || n->kind == NodeKind::kIdentifier ||
          n->kind == NodeKind::kDot) {
        return err(f, "unexpected . after term " + describe(t));
      }
      n->idents.push_back(f.text);
    }
    if (n->kind == NodeKind::kChain && n->idents.empty()) {
      // A bare parenthesized pipeline is just that pipeline.
      n->kind = NodeKind::kPipe;
      auto inner = n->pipe;
      return inner;
    }
    return NodePtr(n);
  }

  bool has_var(const std::string& name) const {
    for (const std::string& v : vars_)
      if (v == name) return true;
    return false;
  }

  std::string_view src_;
  const std::function<bool(std::string_view)>& is_function_;
  size_t pos_ = 0;
  std::vector<size_t> line_starts_;
  bool trim_next_text_ = false;
  bool have_peek_ = false;
  Token peek_;
  int depth_ = 0;
  int range_depth_ = 0;
  std::vector<std::string> vars_;
  ParsedTemplate out_;
};

}  // namespace

Result<ParsedTemplate> parse_go_template(std::string_view text,
                                         const std::function<bool(std::string_view)>& is_function) {
  Parser p(text, is_function);
  return p.run();
}

}  // namespace paddock::chat
