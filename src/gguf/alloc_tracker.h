// Test helper: the largest single allocation (operator new) since the last reset, so tests can
// check that sizes read from a file were validated before anything was reserved for them.
// Implemented in alloc_tracker_test.cpp, which replaces the global operator new of the test binary.
//   reset_largest_allocation(); parse(bytes); EXPECT_LE(largest_allocation(), bound);
#pragma once

#include <cstddef>

namespace paddock::gguf::testing {

void reset_largest_allocation();
size_t largest_allocation();

}  // namespace paddock::gguf::testing
