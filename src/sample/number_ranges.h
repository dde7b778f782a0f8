// GBNF expressions for the canonical decimal spellings of bounded integers and numbers, used by
// the JSON schema converter for minimum/maximum. Integers are exact; numbers allow a fraction
// only where every continuation stays inside the (integer) bounds.
// Invariant: lo <= hi and both within +-kMaxIntegerMagnitude.
//   std::string e = integer_range_gbnf(-5, 120);  // ("-" ([1-5]) | [0-9] | [1-9] [0-9] | "1" [0-1] [0-9] |
//   "120")
#pragma once

#include <cstdint>
#include <string>

namespace paddock::sample {

// 16 digits: the longest integral part the generic JSON number rule allows.
inline constexpr int64_t kMaxIntegerMagnitude = 9999999999999999;

// Every integer in [lo, hi], without leading zeros or "-0".
std::string integer_range_gbnf(int64_t lo, int64_t hi);

// Decimal numbers (no exponent) in [lo, hi]: the integers, plus "k.ddd" forms whose whole
// interval [k, k+1] (or [-(k+1), -k]) lies within the bounds. `frac` names the digits rule.
std::string number_range_gbnf(int64_t lo, int64_t hi, const std::string& frac);

}  // namespace paddock::sample
