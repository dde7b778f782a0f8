#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace paddock::detail {

void check_failed(const char* file, int line, const char* expr, const char* msg) {
  std::fprintf(stderr, "paddock: %s:%d: check failed: %s %s\n", file, line, expr, msg);
  std::fflush(stderr);
  std::abort();
}

}  // namespace paddock::detail
