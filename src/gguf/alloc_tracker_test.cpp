// Replaces the global operator new of the gguf test binary to record the largest request
// (kept apart from the tests so no allocation is inlined next to these definitions).
#include <atomic>
#include <cstdlib>
#include <new>

#include "gguf/alloc_tracker.h"

namespace {
std::atomic<size_t> g_largest{0};
}  // namespace

void* operator new(size_t n) {
  size_t cur = g_largest.load(std::memory_order_relaxed);
  while (n > cur && !g_largest.compare_exchange_weak(cur, n)) {
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace paddock::gguf::testing {
void reset_largest_allocation() { g_largest = 0; }
size_t largest_allocation() { return g_largest.load(); }
}  // namespace paddock::gguf::testing
