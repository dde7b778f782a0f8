// Internal error channel of the Jinja engine. Deep recursion in the parser and evaluator
// makes exceptions the simplest way to unwind; they never leave the library: the public
// entry points (jinja.h) catch TemplateError and turn it into a Status.
//   throw TemplateError(ErrorKind::kType, "unsupported operand", line);
#pragma once

#include <stdexcept>
#include <string>

namespace paddock::jinja {

// The jinja2 exception class each error corresponds to (named in messages).
enum class ErrorKind { kSyntax, kUndefined, kType, kSecurity, kRaised, kLimit };

const char* error_kind_name(ErrorKind k);

class TemplateError : public std::runtime_error {
 public:
  TemplateError(ErrorKind kind, const std::string& message, int line = 0)
      : std::runtime_error(message), kind_(kind), line_(line) {}
  ErrorKind kind() const { return kind_; }
  int line() const { return line_; }
  void set_line_if_unknown(int line) {
    if (line_ == 0) line_ = line;
  }

 private:
  ErrorKind kind_;
  int line_;
};

}  // namespace paddock::jinja
