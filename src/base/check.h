// PADDOCK_CHECK: aborts with file:line on a broken engine invariant (never for bad input,
// which gets a Status). Always on, also in release builds: a wrong answer is worse than a crash.
#pragma once

namespace paddock::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* expr, const char* msg);
}

#define PADDOCK_CHECK(cond)                                                             \
  do {                                                                                  \
    if (__builtin_expect(!(cond), 0)) ::paddock::detail::check_failed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define PADDOCK_CHECK_MSG(cond, msg)                                                     \
  do {                                                                                   \
    if (__builtin_expect(!(cond), 0)) ::paddock::detail::check_failed(__FILE__, __LINE__, #cond, msg); \
  } while (0)
