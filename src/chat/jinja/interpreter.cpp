#include "chat/jinja/interpreter.h"

#include <cmath>
#include <limits>

#include "chat/jinja/builtins.h"
#include "chat/jinja/utf8.h"

namespace paddock::jinja {

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    const auto it = s->vars.find(name);
    if (it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

void throw_undefined(const Value& v) {
  if (v.undefined_hint().rfind("SecurityError:", 0) == 0)
    throw TemplateError(ErrorKind::kSecurity, v.undefined_hint().substr(15));
  throw TemplateError(ErrorKind::kUndefined,
                      v.undefined_hint().empty() ? "value is undefined" : v.undefined_hint());
}

Interpreter::Interpreter(const Limits& limits, const std::tm& date) : limits_(limits), date_(date) {}

void Interpreter::step() {
  if (++steps_ > limits_.max_steps)
    throw TemplateError(ErrorKind::kLimit, std::string("template exceeded ") +
                                               std::to_string(limits_.max_steps) + " evaluation steps");
}

void Interpreter::check_size(size_t bytes) const {
  if (bytes > limits_.max_output_bytes)
    throw TemplateError(ErrorKind::kLimit, std::string("string of ") + std::to_string(bytes) +
                                               " bytes exceeds the limit of " +
                                               std::to_string(limits_.max_output_bytes));
}

Value Interpreter::make_string(std::string s) {
  check_size(s.size());
  return Value(std::move(s));
}

Value Interpreter::make_list(std::vector<Value> items) {
  if (items.size() > limits_.max_items)
    throw TemplateError(ErrorKind::kLimit,
                        std::string("list of ") + std::to_string(items.size()) + " items exceeds the limit");
  return Value::list(std::move(items));
}

void Interpreter::append_output(std::string& out, const std::string& s) {
  check_size(out.size() + s.size());
  out += s;
}

Value Interpreter::make_namespace(std::shared_ptr<DictData> attrs) {
  namespaces_.push_back(attrs);
  return Value::namespace_(std::move(attrs));
}

std::string Interpreter::render(const Body& body, const Value& context) {
  struct ClearNamespaces {
    ~ClearNamespaces() {
      for (auto& ns : list) ns->items.clear();
    }
    std::vector<std::shared_ptr<DictData>>& list;
  } clear{namespaces_};
  auto globals = std::make_shared<Scope>();
  install_globals(globals->vars);
  auto root = std::make_shared<Scope>();
  root->parent = globals;
  if (context.is_dict()) {
    for (const auto& [k, v] : context.as_dict().items)
      if (k.is_string()) root->vars[k.as_string()] = v;
  }
  std::string out;
  exec_body(body, root, out);
  return out;
}

Interpreter::Flow Interpreter::exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& s : body) {
    const Flow f = exec(*s, scope, out);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const Stmt& s, const ScopePtr& scope, std::string& out) {
  try {
    switch (s.kind) {
      case Stmt::Kind::kText: append_output(out, s.text); break;
      case Stmt::Kind::kOutput: {
        const Value v = eval(*s.expr, scope);
        append_output(out, v.str(limits_.max_output_bytes));
        break;
      }
      case Stmt::Kind::kIf:
        for (const auto& [cond, body] : s.branches)
          if (eval(*cond, scope).truthy()) return exec_body(body, scope, out);
        return exec_body(s.else_body, scope, out);
      case Stmt::Kind::kFor: return exec_for(s, scope, out);
      case Stmt::Kind::kSet: exec_set(s, scope); break;
      case Stmt::Kind::kSetBlock: {
        std::string buf;
        exec_body(s.body, scope, buf);
        Value v(std::move(buf));
        if (s.filter) v = eval_filter_chain(*s.filter, scope, &v);
        scope->vars[s.targets[0]] = v;
        break;
      }
      case Stmt::Kind::kMacro: scope->vars[s.targets[0]] = make_macro(s, scope, nullptr); break;
      case Stmt::Kind::kCallBlock: {
        // The call's own arguments are evaluated normally; `caller` is added as a kwarg.
        const Expr& call = *s.expr;
        const Value callee = eval(*call.children[0], scope);
        Args args = eval_args(call, scope, 1);
        args.keyword.emplace_back("caller", make_macro(s, scope, &s));
        append_output(out, Interpreter::call(callee, args, s.line).str(limits_.max_output_bytes));
        break;
      }
      case Stmt::Kind::kBreak: return Flow::kBreak;
      case Stmt::Kind::kContinue: return Flow::kContinue;
      case Stmt::Kind::kFilterBlock: {
        std::string buf;
        exec_body(s.body, scope, buf);
        const Value v(std::move(buf));
        append_output(out, eval_filter_chain(*s.filter, scope, &v).str());
        break;
      }
      case Stmt::Kind::kWith: {
        auto inner = std::make_shared<Scope>();
        inner->parent = scope;
        for (const auto& [name, expr] : s.params) inner->vars[name] = eval(*expr, scope);
        return exec_body(s.body, inner, out);
      }
    }
  } catch (TemplateError& e) {
    e.set_line_if_unknown(s.line);
    throw;
  }
  return Flow::kNormal;
}

namespace {

void bind_targets(Scope& scope, const std::vector<std::string>& targets, const Value& item, Interpreter& in) {
  if (targets.size() == 1) {
    scope.vars[targets[0]] = item;
    return;
  }
  std::vector<Value> parts = in.iterate(item);
  if (parts.size() != targets.size())
    throw TemplateError(ErrorKind::kType, std::string("cannot unpack ") + std::to_string(parts.size()) +
                                              " values into " + std::to_string(targets.size()) + " targets");
  for (size_t i = 0; i < targets.size(); ++i) scope.vars[targets[i]] = parts[i];
}

}  // namespace

Interpreter::Flow Interpreter::exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
  const Value seq = eval(*s.expr, scope);
  std::vector<Value> items = iterate(seq);
  if (s.cond) {
    std::vector<Value> kept;
    for (const auto& item : items) {
      auto probe = std::make_shared<Scope>();
      probe->parent = scope;
      bind_targets(*probe, s.targets, item, *this);
      if (eval(*s.cond, probe).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec_body(s.else_body, scope, out);
  const auto n = static_cast<int64_t>(items.size());
  // One loop object per loop, updated in place each iteration: building it afresh would
  // cost a dozen allocations per iteration.
  auto index = std::make_shared<int64_t>(0);
  auto loop = std::make_shared<DictData>();
  for (const char* key : {"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth",
                          "depth0", "previtem", "nextitem", "cycle"})
    loop->items.emplace_back(Value(key), Value());
  loop->items[6].second = Value(n);
  loop->items[7].second = Value(1);
  loop->items[8].second = Value(0);
  loop->items[11].second = Value::callable("cycle", [index](Interpreter&, Args& a) -> Value {
    if (a.positional.empty()) throw TemplateError(ErrorKind::kType, "no items for cycling given");
    return a.positional[static_cast<size_t>(*index) % a.positional.size()];
  });
  const Value loop_value = Value::dict(loop);
  for (int64_t i = 0; i < n; ++i) {
    if (++iterations_ > limits_.max_iterations)
      throw TemplateError(ErrorKind::kLimit,
                          "template exceeded " + std::to_string(limits_.max_iterations) + " loop iterations",
                          s.line);
    *index = i;
    auto& v = loop->items;
    v[0].second = Value(i + 1);
    v[1].second = Value(i);
    v[2].second = Value(n - i);
    v[3].second = Value(n - i - 1);
    v[4].second = Value(i == 0);
    v[5].second = Value(i == n - 1);
    v[9].second = i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item");
    v[10].second = i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item");
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    bind_targets(*inner, s.targets, items[static_cast<size_t>(i)], *this);
    inner->vars["loop"] = loop_value;
    if (exec_body(s.body, inner, out) == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

void Interpreter::exec_set(const Stmt& s, const ScopePtr& scope) {
  const Value v = eval(*s.expr, scope);
  if (!s.attr.empty()) {
    const Value* ns = scope->find(s.targets[0]);
    if (!ns || !ns->is_namespace())
      throw TemplateError(ErrorKind::kType,
                          "can only assign attributes of a namespace, '" + s.targets[0] + "' is not one",
                          s.line);
    ns->namespace_attrs().set(Value(s.attr), v);
    return;
  }
  bind_targets(*scope, s.targets, v, *this);
}

Value Interpreter::make_macro(const Stmt& s, const ScopePtr& scope, const Stmt* caller_of) {
  const std::string name = caller_of ? "caller" : s.targets[0];
  const Stmt* def = &s;
  // A weak reference: the scope holds the macro, so a strong one would be a cycle.
  std::weak_ptr<Scope> weak_scope = scope;
  return Value::callable(name, [def, weak_scope, name](Interpreter& in, Args& args) -> Value {
    const ScopePtr closure = weak_scope.lock();
    if (!closure)
      throw TemplateError(ErrorKind::kType, "macro '" + name + "' called after its scope ended", def->line);
    if (in.call_depth_ >= in.limits_.max_call_depth)
      throw TemplateError(
          ErrorKind::kLimit,
          std::string("macro calls nested deeper than ") + std::to_string(in.limits_.max_call_depth),
          def->line);
    auto local = std::make_shared<Scope>();
    local->parent = closure;
    std::vector<Value> varargs;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      if (i < def->params.size()) {
        local->vars[def->params[i].first] = args.positional[i];
      } else {
        varargs.push_back(args.positional[i]);
      }
    }
    auto kwargs = std::make_shared<DictData>();
    for (auto& [k, v] : args.keyword) {
      bool is_param = false;
      for (const auto& p : def->params) is_param = is_param || p.first == k;
      if (is_param || k == "caller") {
        local->vars[k] = v;
      } else {
        kwargs->set(Value(k), v);
      }
    }
    for (const auto& [pname, pdef] : def->params) {
      if (local->vars.count(pname)) continue;
      local->vars[pname] =
          pdef ? in.eval(*pdef, local) : Value::undefined(std::string("'") + pname + "' is undefined");
    }
    local->vars["varargs"] = Value::list(std::move(varargs), /*tuple=*/true);
    local->vars["kwargs"] = Value::dict(kwargs);
    ++in.call_depth_;
    std::string out;
    try {
      in.exec_body(def->body, local, out);
    } catch (...) {
      --in.call_depth_;
      throw;
    }
    --in.call_depth_;
    return Value(std::move(out));
  });
}

Args Interpreter::eval_args(const Expr& e, const ScopePtr& scope, size_t first_arg) {
  Args a;
  for (size_t i = first_arg; i < e.children.size(); ++i) a.positional.push_back(eval(*e.children[i], scope));
  for (const auto& [k, v] : e.kwargs) a.keyword.emplace_back(k, eval(*v, scope));
  return a;
}

Value Interpreter::eval_filter_chain(const Expr& e, const ScopePtr& scope, const Value* block_value) {
  const Expr* inner = e.children[0].get();
  const Value operand = !inner                               ? *block_value
                        : inner->kind == Expr::Kind::kFilter ? eval_filter_chain(*inner, scope, block_value)
                                                             : eval(*inner, scope);
  Args a = eval_args(e, scope, 1);
  return apply_filter(e.name, operand, a, e.line);
}

Value Interpreter::call(const Value& callee, Args& args, int line) {
  if (callee.is_undefined()) throw_undefined(callee);
  if (!callee.is_callable())
    throw TemplateError(ErrorKind::kType, std::string("'") + callee.type_name() + "' object is not callable",
                        line);
  return callee.as_callable().fn(*this, args);
}

Value Interpreter::eval(const Expr& e, const ScopePtr& scope) {
  step();
  try {
    switch (e.kind) {
      case Expr::Kind::kLiteral: return e.value;
      case Expr::Kind::kName: {
        const Value* v = scope->find(e.name);
        return v ? *v : Value::undefined(std::string("'") + e.name + "' is undefined");
      }
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        std::vector<Value> items;
        items.reserve(e.children.size());
        for (const auto& c : e.children) items.push_back(eval(*c, scope));
        return Value::list(std::move(items), e.kind == Expr::Kind::kTuple);
      }
      case Expr::Kind::kDict: {
        auto d = std::make_shared<DictData>();
        for (size_t i = 0; i + 1 < e.children.size(); i += 2)
          d->set(eval(*e.children[i], scope), eval(*e.children[i + 1], scope));
        return Value::dict(std::move(d));
      }
      case Expr::Kind::kAttr: return get_attr(eval(*e.children[0], scope), e.name);
      case Expr::Kind::kItem: return get_item(eval(*e.children[0], scope), eval(*e.children[1], scope));
      case Expr::Kind::kSlice: {
        const Value obj = eval(*e.children[0], scope);
        Value parts[3];
        for (int i = 0; i < 3; ++i)
          if (e.children[static_cast<size_t>(i) + 1])
            parts[i] = eval(*e.children[static_cast<size_t>(i) + 1], scope);
        return eval_slice(obj, parts[0], parts[1], parts[2]);
      }
      case Expr::Kind::kCall: {
        const Value callee = eval(*e.children[0], scope);
        Args a = eval_args(e, scope, 1);
        return call(callee, a, e.line);
      }
      case Expr::Kind::kFilter: return eval_filter_chain(e, scope, nullptr);
      case Expr::Kind::kTest: {
        const Value v = eval(*e.children[0], scope);
        Args a = eval_args(e, scope, 1);
        return Value(apply_test(e.name, v, a) != e.negated);
      }
      case Expr::Kind::kNeg:
      case Expr::Kind::kPos: {
        const Value v = eval(*e.children[0], scope);
        if (v.is_undefined()) throw_undefined(v);
        if (!v.is_number())
          throw TemplateError(ErrorKind::kType,
                              std::string("bad operand type for unary -: '") + v.type_name() + "'");
        if (e.kind == Expr::Kind::kPos) return v.is_bool() ? Value(v.as_int()) : v;
        if (v.is_float()) return Value(-v.as_double());
        if (v.as_int() == std::numeric_limits<int64_t>::min())
          throw TemplateError(ErrorKind::kType, "integer overflow");
        return Value(-v.as_int());
      }
      case Expr::Kind::kBinary:
        return eval_binary(e.name, eval(*e.children[0], scope), eval(*e.children[1], scope), e.line);
      case Expr::Kind::kCompare: {
        Value left = eval(*e.children[0], scope);
        for (size_t i = 0; i < e.ops.size(); ++i) {
          Value right = eval(*e.children[i + 1], scope);
          if (!eval_compare(e.ops[i], left, right, e.line)) return Value(false);
          left = std::move(right);
        }
        return Value(true);
      }
      case Expr::Kind::kAnd: {
        Value l = eval(*e.children[0], scope);
        return l.truthy() ? eval(*e.children[1], scope) : l;
      }
      case Expr::Kind::kOr: {
        Value l = eval(*e.children[0], scope);
        return l.truthy() ? l : eval(*e.children[1], scope);
      }
      case Expr::Kind::kNot: return Value(!eval(*e.children[0], scope).truthy());
      case Expr::Kind::kCond:
        if (eval(*e.children[0], scope).truthy()) return eval(*e.children[1], scope);
        if (e.children[2]) return eval(*e.children[2], scope);
        return Value::undefined(std::string("the inline if-expression on line ") + std::to_string(e.line) +
                                " evaluated to false and no else section was defined.");
    }
  } catch (TemplateError& err) {
    err.set_line_if_unknown(e.line);
    throw;
  }
  return Value();
}

}  // namespace paddock::jinja
