// The function table of the Go template engine: Go's builtins (except and/or, which the
// executor short-circuits itself) plus the functions Ollama registers. Each function gets
// its evaluated arguments and returns a Value or an error message (the executor adds
// "error calling NAME: " and the position).
//   const GoFunc* f = find_template_function("eq"); Result<Value> r = (*f)(args, ctx);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "chat/value.h"

namespace paddock::chat {

struct FuncContext {
  std::string date;  // "YYYY-MM-DD" for currentDate/yesterdayDate
};

using GoFunc = Result<Value> (*)(const std::vector<Value>& args, const FuncContext& ctx);

// nullptr when there is no such function. "and" and "or" are found (as markers) but are
// evaluated lazily by the executor.
const GoFunc* find_template_function(std::string_view name);

// fmt.Sprintf with Go's verbs (%v %s %d %q %f %e %g %t %x %X %c %%), flags, width and
// precision; mismatches print like Go ("%!d(string=x)", "%!s(MISSING)").
std::string go_sprintf(std::string_view format, const std::vector<Value>& args);

// Go's truth for if/with/and/or/not.
inline bool go_truth(const Value& v) { return v.truthy(); }

}  // namespace paddock::chat
