// The executor of parsed Go templates, and Ollama's tree rewrites (see gotmpl.h).
#include "chat/gotmpl.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <set>

#include "chat/gotmpl_funcs.h"

namespace paddock::chat {

namespace {

enum class Flow { kNormal, kBreak, kContinue };

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
  return buf;
}

class Executor {
 public:
  Executor(const ParsedTemplate& t, const ExecOptions& opt) : t_(t), lim_(opt.limits) {
    ctx_.date = opt.date.empty() ? today() : opt.date;
  }

  Result<std::string> run(const Value& data) {
    vars_.push_back({"$", data});
    PADDOCK_ASSIGN(Flow f, walk(*t_.root, data));
    (void)f;
    return std::move(out_);
  }

 private:
  Status err(const Node& n, const std::string& msg) const {
    return invalid_argument("template: " + std::to_string(n.line) + ":" + std::to_string(n.col) +
                            ": executing: " + msg);
  }

  Status step(const Node& n) {
    if (++steps_ > lim_.max_steps) {
      return Status(Code::kResourceExhausted, "template: " + std::to_string(n.line) + ":" +
                                                  std::to_string(n.col) + ": execution exceeded " +
                                                  std::to_string(lim_.max_steps) + " steps");
    }
    return Status::ok();
  }

  Status emit(const Node& n, std::string_view s) {
    if (out_.size() + s.size() > lim_.max_output_bytes) {
      return Status(Code::kResourceExhausted, "template: " + std::to_string(n.line) + ":" +
                                                  std::to_string(n.col) + ": output exceeds " +
                                                  std::to_string(lim_.max_output_bytes) + " bytes");
    }
    out_.append(s);
    return Status::ok();
  }

  Result<Flow> walk(const Node& n, const Value& dot) {
    PADDOCK_TRY(step(n));
    switch (n.kind) {
      case NodeKind::kList:
        for (const NodePtr& c : n.nodes) {
          PADDOCK_ASSIGN(Flow f, walk(*c, dot));
          if (f != Flow::kNormal) return f;
        }
        return Flow::kNormal;
      case NodeKind::kText: PADDOCK_TRY(emit(n, n.text)); return Flow::kNormal;
      case NodeKind::kAction: {
        PADDOCK_ASSIGN(Value v, eval_pipeline(*n.pipe, dot));
        if (n.pipe->decl.empty()) PADDOCK_TRY(emit(n, go_print(v)));
        return Flow::kNormal;
      }
      case NodeKind::kIf:
      case NodeKind::kWith: {
        const size_t mark = vars_.size();
        PADDOCK_ASSIGN(Value v, eval_pipeline(*n.pipe, dot));
        Result<Flow> r = Flow::kNormal;
        if (go_truth(v)) {
          r = walk(*n.list, n.kind == NodeKind::kWith ? v : dot);
        } else if (n.else_list) {
          r = walk(*n.else_list, dot);
        }
        vars_.resize(mark);
        return r;
      }
      case NodeKind::kRange: return walk_range(n, dot);
      case NodeKind::kBreak: return Flow::kBreak;
      case NodeKind::kContinue: return Flow::kContinue;
      case NodeKind::kTemplate: return walk_template(n, dot);
      default: return err(n, "unexpected node");
    }
  }

  Result<Flow> walk_range(const Node& n, const Value& dot) {
    const size_t mark = vars_.size();
    PADDOCK_ASSIGN(Value v, eval_pipeline(*n.pipe, dot));
    const size_t nvars = n.pipe->decl.size();
    auto iteration = [&](const Value& key, const Value& elem) -> Result<Flow> {
      if (++iterations_ > lim_.max_range_iterations) {
        return Status(Code::kResourceExhausted,
                      "template: " + std::to_string(n.line) + ":" + std::to_string(n.col) +
                          ": range exceeded " + std::to_string(lim_.max_range_iterations) + " iterations");
      }
      if (nvars >= 1) vars_[vars_.size() - 1].second = elem;
      if (nvars >= 2) vars_[vars_.size() - 2].second = key;
      const size_t inner = vars_.size();
      Result<Flow> r = walk(*n.list, elem);
      vars_.resize(inner);
      return r;
    };
    bool any = false;
    Status st;
    switch (v.kind()) {
      case Value::Kind::kList:
        for (size_t i = 0; i < v.items().size(); ++i) {
          any = true;
          Result<Flow> f = iteration(Value(static_cast<int64_t>(i)), v.items()[i]);
          if (!f.ok()) return f.status();
          if (*f == Flow::kBreak) break;
        }
        break;
      case Value::Kind::kObject:
        if (v.flavor() == Value::Flavor::kStruct) return err(n, "range can't iterate over " + go_print(v));
        for (const Field& fld : v.fields()) {
          any = true;
          Result<Flow> f = iteration(Value(fld.name), *fld.value);
          if (!f.ok()) return f.status();
          if (*f == Flow::kBreak) break;
        }
        break;
      case Value::Kind::kInt:
        if (nvars > 1) return err(n, "can't use " + go_print(v) + " to iterate over more than one variable");
        for (int64_t i = 0; i < v.as_int(); ++i) {
          any = true;
          Result<Flow> f = iteration(Value(i), Value(i));
          if (!f.ok()) return f.status();
          if (*f == Flow::kBreak) break;
        }
        break;
      case Value::Kind::kInvalid: break;
      default: return err(n, "range can't iterate over " + go_print(v));
    }
    if (!any && n.else_list) {
      Result<Flow> r = walk(*n.else_list, dot);
      vars_.resize(mark);
      if (!r.ok()) return r.status();
      return *r;
    }
    vars_.resize(mark);
    return Flow::kNormal;
  }

  Result<Flow> walk_template(const Node& n, const Value& dot) {
    auto it = t_.defines.find(n.text);
    if (it == t_.defines.end()) return err(n, "template: no such template \"" + n.text + "\"");
    if (depth_ >= lim_.max_template_depth) {
      return Status(Code::kResourceExhausted, "template: " + std::to_string(n.line) + ":" +
                                                  std::to_string(n.col) +
                                                  ": exceeded maximum template depth (" +
                                                  std::to_string(lim_.max_template_depth) + ")");
    }
    Value new_dot;
    if (n.pipe) {
      PADDOCK_ASSIGN(new_dot, eval_pipeline(*n.pipe, dot));
    }
    std::vector<std::pair<std::string, Value>> saved = std::move(vars_);
    vars_ = {{"$", new_dot}};
    ++depth_;
    Result<Flow> r = walk(*it->second, new_dot);
    --depth_;
    vars_ = std::move(saved);
    if (!r.ok()) return r.status();
    return Flow::kNormal;
  }

  Result<Value> eval_pipeline(const Node& pipe, const Value& dot) {
    if (pipe.kind != NodeKind::kPipe) return eval_arg(pipe, dot);
    Value v;
    bool have = false;
    for (const NodePtr& cmd : pipe.nodes) {
      PADDOCK_ASSIGN(v, eval_command(*cmd, dot, have ? &v : nullptr));
      have = true;
    }
    for (const std::string& name : pipe.decl) {
      if (pipe.is_assign) {
        for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
          if (it->first == name) {
            it->second = v;
            break;
          }
        }
      } else {
        vars_.push_back({name, v});
      }
    }
    return v;
  }

  Result<Value> eval_command(const Node& cmd, const Value& dot, const Value* final_value) {
    PADDOCK_TRY(step(cmd));
    const Node& first = *cmd.nodes[0];
    const bool has_args = cmd.nodes.size() > 1 || final_value;
    if (first.kind == NodeKind::kIdentifier) return eval_function(cmd, first.text, dot, final_value);
    if (has_args) {
      if (first.kind == NodeKind::kField || (first.kind == NodeKind::kVariable && !first.idents.empty()) ||
          (first.kind == NodeKind::kChain)) {
        return err(first, "can't give argument to non-function field " +
                              (first.idents.empty() ? std::string("") : first.idents.back()));
      }
      return err(first, "can't give argument to non-function " + describe_operand(first));
    }
    if (first.kind == NodeKind::kNil) return err(first, "nil is not a command");
    return eval_arg(first, dot);
  }

  static std::string describe_operand(const Node& n) {
    switch (n.kind) {
      case NodeKind::kDot: return ".";
      case NodeKind::kVariable: return n.text;
      case NodeKind::kLiteral: return go_print(n.literal);
      default: return "value";
    }
  }

  Result<Value> eval_function(const Node& cmd, const std::string& name, const Value& dot,
                              const Value* final_value) {
    const Node& id = *cmd.nodes[0];
    const size_t nargs = cmd.nodes.size() - 1 + (final_value ? 1 : 0);
    if (name == "and" || name == "or") {
      if (nargs < 1) return err(id, "wrong number of args for " + name + ": want at least 1 got 0");
      Value v;
      for (size_t i = 1; i <= nargs; ++i) {
        if (i < cmd.nodes.size()) {
          PADDOCK_ASSIGN(v, eval_arg(*cmd.nodes[i], dot));
        } else {
          v = *final_value;
        }
        const bool t = go_truth(v);
        if ((name == "and" && !t) || (name == "or" && t)) return v;
      }
      return v;
    }
    const GoFunc* fn = find_template_function(name);
    if (!fn) return err(id, "\"" + name + "\" is not a defined function");
    std::vector<Value> args;
    args.reserve(nargs);
    for (size_t i = 1; i < cmd.nodes.size(); ++i) {
      PADDOCK_ASSIGN(Value a, eval_arg(*cmd.nodes[i], dot));
      args.push_back(std::move(a));
    }
    if (final_value) args.push_back(*final_value);
    Result<Value> r = (*fn)(args, ctx_);
    if (!r.ok()) {
      const std::string& m = r.status().message();
      if (m.rfind("wrong number of args", 0) == 0 || m.rfind("wrong type", 0) == 0) return err(id, m);
      return err(id, "error calling " + name + ": " + m);
    }
    return r;
  }

  Result<Value> eval_arg(const Node& n, const Value& dot) {
    PADDOCK_TRY(step(n));
    switch (n.kind) {
      case NodeKind::kDot: return dot;
      case NodeKind::kNil: return Value();
      case NodeKind::kLiteral: return n.literal;
      case NodeKind::kField: return eval_fields(n, dot, n.idents);
      case NodeKind::kVariable: {
        const Value* v = nullptr;
        for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
          if (it->first == n.text) {
            v = &it->second;
            break;
          }
        }
        if (!v) return err(n, "undefined variable: " + n.text);
        if (n.idents.empty()) return *v;
        return eval_fields(n, *v, n.idents);
      }
      case NodeKind::kChain: {
        PADDOCK_ASSIGN(Value base, eval_pipeline(*n.pipe, dot));
        return eval_fields(n, base, n.idents);
      }
      case NodeKind::kPipe: return eval_pipeline(n, dot);
      case NodeKind::kIdentifier: {
        Node cmd;
        cmd.kind = NodeKind::kCommand;
        cmd.line = n.line, cmd.col = n.col;
        cmd.nodes.push_back(std::make_shared<Node>(n));
        return eval_function(cmd, n.text, dot, nullptr);
      }
      default: return err(n, "can't evaluate this operand");
    }
  }

  Result<Value> eval_fields(const Node& n, const Value& receiver, const std::vector<std::string>& idents) {
    Value cur = receiver;
    for (size_t i = 0; i < idents.size(); ++i) {
      const std::string& name = idents[i];
      if (!cur.is_valid()) {
        // Go: a missing value at the start of a chain stays missing; a nil interface
        // reached through a field cannot be dereferenced further.
        if (i == 0) return Value();
        return err(n, "nil pointer evaluating interface {}." + name);
      }
      if (cur.kind() != Value::Kind::kObject) {
        return err(n, "can't evaluate field " + name + " in type " + cur.go_type());
      }
      const Value* f = cur.find(name);
      if (!f) {
        if (cur.flavor() == Value::Flavor::kStruct) {
          return err(n, "can't evaluate field " + name + " in type " + cur.go_type());
        }
        cur = Value();
        continue;
      }
      cur = *f;
    }
    return cur;
  }

  const ParsedTemplate& t_;
  const ExecLimits lim_;
  FuncContext ctx_;
  std::string out_;
  std::vector<std::pair<std::string, Value>> vars_;
  uint64_t steps_ = 0;
  uint64_t iterations_ = 0;
  int depth_ = 0;
};

// ---- Ollama's tree helpers ----

void collect_idents(const Node& n, std::set<std::string>* out) {
  for (const std::string& s : n.idents) out->insert(s);
  if (n.kind == NodeKind::kVariable) out->insert(n.text);
  for (const NodePtr& c : n.nodes) collect_idents(*c, out);
  for (const NodePtr* p : {&n.pipe, &n.list, &n.else_list})
    if (*p) collect_idents(**p, out);
}

// Mirrors Ollama's deleteNode walk: returns the rewritten node or nullptr when deleted.
NodePtr cut_after_response(const NodePtr& n, bool* cut) {
  if (*cut) return nullptr;
  switch (n->kind) {
    case NodeKind::kField:
      if (std::find(n->idents.begin(), n->idents.end(), "Response") != n->idents.end()) *cut = true;
      return n;
    case NodeKind::kList: {
      auto copy = std::make_shared<Node>(*n);
      copy->nodes.clear();
      for (const NodePtr& c : n->nodes)
        if (NodePtr r = cut_after_response(c, cut)) copy->nodes.push_back(r);
      return copy;
    }
    case NodeKind::kIf:
    case NodeKind::kWith:
    case NodeKind::kRange: {
      auto copy = std::make_shared<Node>(*n);
      copy->list = cut_after_response(n->list, cut);
      if (!copy->list) copy->list = std::make_shared<Node>();
      if (n->else_list) {
        copy->else_list = cut_after_response(n->else_list, cut);
        if (!copy->else_list) copy->else_list = std::make_shared<Node>();
      }
      return copy;
    }
    case NodeKind::kAction: {
      NodePtr pipe = cut_after_response(n->pipe, cut);
      if (!pipe) return nullptr;
      auto copy = std::make_shared<Node>(*n);
      copy->pipe = pipe;
      return copy;
    }
    case NodeKind::kPipe: {
      auto copy = std::make_shared<Node>(*n);
      copy->nodes.clear();
      for (const NodePtr& c : n->nodes) {
        auto cmd = std::make_shared<Node>(*c);
        cmd->nodes.clear();
        for (const NodePtr& a : c->nodes)
          if (NodePtr r = cut_after_response(a, cut)) cmd->nodes.push_back(r);
        if (cmd->nodes.empty()) return nullptr;
        copy->nodes.push_back(cmd);
      }
      if (copy->nodes.empty()) return nullptr;
      return copy;
    }
    default: return n;
  }
}

}  // namespace

bool is_template_function(std::string_view name) { return find_template_function(name) != nullptr; }

Result<GoTemplate> GoTemplate::parse(std::string_view text) {
  PADDOCK_ASSIGN(ParsedTemplate tree, parse_go_template(text, is_template_function));
  GoTemplate t;
  t.tree_ = std::move(tree);
  if (!t.uses_var("messages") && !t.uses_var("response")) {
    auto field = std::make_shared<Node>();
    field->kind = NodeKind::kField;
    field->idents = {"Response"};
    auto cmd = std::make_shared<Node>();
    cmd->kind = NodeKind::kCommand;
    cmd->nodes = {field};
    auto pipe = std::make_shared<Node>();
    pipe->kind = NodeKind::kPipe;
    pipe->nodes = {cmd};
    auto action = std::make_shared<Node>();
    action->kind = NodeKind::kAction;
    action->pipe = pipe;
    auto root = std::make_shared<Node>(*t.tree_.root);
    root->nodes.push_back(action);
    t.tree_.root = root;
  }
  return t;
}

Result<std::string> GoTemplate::execute(const Value& data, const ExecOptions& options) const {
  Executor ex(tree_, options);
  return ex.run(data);
}

std::vector<std::string> GoTemplate::vars() const {
  std::set<std::string> ids;
  collect_idents(*tree_.root, &ids);
  for (const auto& [name, body] : tree_.defines) collect_idents(*body, &ids);
  std::set<std::string> lower;
  for (std::string s : ids) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    lower.insert(s);
  }
  return {lower.begin(), lower.end()};
}

bool GoTemplate::uses_var(std::string_view lower_name) const {
  const std::vector<std::string> v = vars();
  return std::find(v.begin(), v.end(), lower_name) != v.end();
}

GoTemplate GoTemplate::truncated_after_response() const {
  GoTemplate t = *this;
  bool cut = false;
  NodePtr root = cut_after_response(tree_.root, &cut);
  t.tree_.root = root ? root : std::make_shared<Node>();
  return t;
}

}  // namespace paddock::chat
