// Go text/template as Ollama uses it: parse once, execute against a Value (the template's
// `.`), with Ollama's extra functions (json, currentDate, yesterdayDate, toTypeScriptType)
// and `missingkey=zero`. Execution is bounded: output size, steps, range iterations and
// {{template}} depth all have limits, and exceeding one is an error, never a hang.
// Errors read "template: line:col: ..." (parse) or "template: line:col: executing ...".
//   PADDOCK_ASSIGN(GoTemplate t, GoTemplate::parse(text));
//   PADDOCK_ASSIGN(std::string out, t.execute(data));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "chat/gotmpl_ast.h"
#include "chat/value.h"

namespace paddock::chat {

struct ExecLimits {
  size_t max_output_bytes = 16u << 20;
  uint64_t max_steps = 20'000'000;            // nodes walked + commands evaluated
  uint64_t max_range_iterations = 2'000'000;  // across all ranges of one execution
  int max_template_depth = 100;               // nested {{template}} calls
};

struct ExecOptions {
  ExecLimits limits;
  std::string date;  // "YYYY-MM-DD" that currentDate returns; empty = today (local time)
};

class GoTemplate {
 public:
  // Parses like Ollama's template.Parse: when the template mentions neither .Messages nor
  // .Response, a trailing {{ .Response }} is appended.
  static Result<GoTemplate> parse(std::string_view text);

  Result<std::string> execute(const Value& data, const ExecOptions& options = {}) const;

  // Ollama's Vars(): every field/variable identifier, lower-cased, sorted, unique.
  std::vector<std::string> vars() const;
  bool uses_var(std::string_view lower_name) const;
  // Ollama's legacy-mode cut: a copy whose main tree ends right after the first `.Response`
  // field node (everything after it, in walk order, removed).
  GoTemplate truncated_after_response() const;
  const ParsedTemplate& tree() const { return tree_; }

 private:
  ParsedTemplate tree_;
};

// Whether `name` is a function templates may call (Go builtins + Ollama's).
bool is_template_function(std::string_view name);

}  // namespace paddock::chat
