// The Jinja evaluator: walks the syntax tree over Values with jinja2's scoping (for loops
// and macros open a scope, `if` does not), its Undefined rules and the sandbox of
// ImmutableSandboxedEnvironment (no `_` attributes, no mutating methods). Every loop
// iteration, evaluation step, range, string/list size, macro depth and output byte is
// counted against Limits, so hostile templates stop with an error instead of exhausting
// the host. Internal to the library: use jinja.h.
//   Interpreter in(limits, date); std::string out = in.render(body, context_dict);
#pragma once

#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/error.h"
#include "chat/jinja/limits.h"
#include "chat/jinja/value.h"

namespace paddock::jinja {

struct Scope {
  std::shared_ptr<Scope> parent;
  std::map<std::string, Value, std::less<>> vars;
  const Value* find(const std::string& name) const;
};

class Interpreter {
 public:
  // `date` is the broken-down time strftime_now formats.
  Interpreter(const Limits& limits, const std::tm& date);

  std::string render(const Body& body, const Value& context);

  // Entry points shared with the builtins (filters.cpp, methods.cpp).
  Value call(const Value& callee, Args& args, int line);
  Value get_attr(const Value& obj, const std::string& name);
  Value get_item(const Value& obj, const Value& key);
  std::vector<Value> iterate(const Value& v);
  Value apply_filter(const std::string& name, const Value& v, Args& args, int line);
  bool apply_test(const std::string& name, const Value& v, Args& args);
  Value make_string(std::string s);           // checks the size limit
  Value make_list(std::vector<Value> items);  // checks the item limit
  void check_size(size_t bytes) const;
  // Namespaces are the only mutable values and may end up containing themselves; the
  // interpreter empties every one it made when the render ends, which breaks such cycles.
  Value make_namespace(std::shared_ptr<DictData> attrs);
  const Limits& limits() const { return limits_; }
  const std::tm& date() const { return date_; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  using ScopePtr = std::shared_ptr<Scope>;

  Flow exec_body(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec(const Stmt& s, const ScopePtr& scope, std::string& out);
  Flow exec_for(const Stmt& s, const ScopePtr& scope, std::string& out);
  void exec_set(const Stmt& s, const ScopePtr& scope);
  Value make_macro(const Stmt& s, const ScopePtr& scope, const Stmt* caller_of);
  Value eval(const Expr& e, const ScopePtr& scope);
  Value eval_binary(const std::string& op, const Value& a, const Value& b, int line);
  bool eval_compare(const std::string& op, const Value& a, const Value& b, int line);
  Value eval_filter_chain(const Expr& e, const ScopePtr& scope, const Value* block_value);
  Args eval_args(const Expr& e, const ScopePtr& scope, size_t first_arg);
  Value eval_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
  void append_output(std::string& out, const std::string& s);
  void step();

  Limits limits_;
  std::tm date_;
  int64_t iterations_ = 0;
  int64_t steps_ = 0;
  int call_depth_ = 0;
  std::vector<std::shared_ptr<DictData>> namespaces_;
};

[[noreturn]] void throw_undefined(const Value& v);
std::string py_strftime(const std::string& fmt, const std::tm& t);

}  // namespace paddock::jinja
