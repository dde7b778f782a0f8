// Resource limits of one Jinja render. Every bound a hostile template could push on is
// here, so a template ends with an error (ErrorKind::kLimit) rather than a hang or an
// out-of-memory. The defaults are far above what real chat templates need.
//   Limits l; l.max_output_bytes = 1 << 20;
#pragma once

#include <cstddef>
#include <cstdint>

namespace paddock::jinja {

struct Limits {
  size_t max_output_bytes = 16u << 20;  // also the largest string any operation may build
  size_t max_items = 200000;            // largest list a template may build
  int64_t max_range = 100000;           // jinja2's sandbox MAX_RANGE
  int64_t max_iterations = 1000000;     // for-loop iterations over the whole render
  int64_t max_steps = 50000000;         // expression evaluations over the whole render
  int max_call_depth = 64;              // nested macro calls
  int max_nesting = 256;                // syntax nesting depth (parser)
};

}  // namespace paddock::jinja
