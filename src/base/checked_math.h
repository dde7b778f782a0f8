// Overflow-checked arithmetic for sizes that come from untrusted input (files, requests).
//   uint64_t n; if (!checked_mul(a, b, &n)) return corrupt("size overflows");
#pragma once

#include <cstdint>

namespace paddock {

template <typename T>
[[nodiscard]] inline bool checked_add(T a, T b, T* out) { return !__builtin_add_overflow(a, b, out); }
template <typename T>
[[nodiscard]] inline bool checked_mul(T a, T b, T* out) { return !__builtin_mul_overflow(a, b, out); }

// Rounds x up to a multiple of `align` (a power of two); false on overflow.
[[nodiscard]] inline bool checked_align_up(uint64_t x, uint64_t align, uint64_t* out) {
  uint64_t t;
  if (!checked_add<uint64_t>(x, align - 1, &t)) return false;
  *out = t & ~(align - 1);
  return true;
}

}  // namespace paddock
