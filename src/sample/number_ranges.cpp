// Digit-by-digit range expansion (the classic regex range construction): a range of
// equal-length numbers splits at its first differing digit into a lower edge, a middle of free
// digits and an upper edge.
#include "sample/number_ranges.h"

#include <algorithm>
#include <vector>

namespace paddock::sample {
namespace {

std::string digit_class(char a, char b) {
  if (a == b) return std::string("\"") + a + "\"";
  return std::string("[") + a + "-" + b + "]";
}

std::string free_digits(size_t n) {
  if (n == 0) return "";
  if (n == 1) return " [0-9]";
  return " [0-9]{" + std::to_string(n) + "}";
}

// Alternatives (without outer parentheses) for all digit strings s with lo <= s <= hi, all
// of the same length.
void same_length(const std::string& lo, const std::string& hi, const std::string& prefix,
                 std::vector<std::string>* out) {
  const size_t n = lo.size();
  if (n == 0) {
    out->push_back(prefix.empty() ? "\"\"" : prefix);
    return;
  }
  const auto join = [&](const std::string& part) { return prefix.empty() ? part : prefix + " " + part; };
  if (lo[0] == hi[0]) {
    same_length(lo.substr(1), hi.substr(1), join(digit_class(lo[0], lo[0])), out);
    return;
  }
  const std::string rest_lo = lo.substr(1), rest_hi = hi.substr(1);
  const bool lo_full = rest_lo.find_first_not_of('0') == std::string::npos;
  const bool hi_full = rest_hi.find_first_not_of('9') == std::string::npos;
  char mid_lo = lo[0], mid_hi = hi[0];
  if (!lo_full) {
    same_length(rest_lo, std::string(n - 1, '9'), join(digit_class(lo[0], lo[0])), out);
    ++mid_lo;
  }
  if (!hi_full) --mid_hi;
  if (mid_lo <= mid_hi) out->push_back(join(digit_class(mid_lo, mid_hi)) + free_digits(n - 1));
  if (!hi_full) same_length(std::string(n - 1, '0'), rest_hi, join(digit_class(hi[0], hi[0])), out);
}

// Alternatives for every non-negative integer in [lo, hi].
void non_negative(uint64_t lo, uint64_t hi, std::vector<std::string>* out) {
  uint64_t start = lo;
  while (start <= hi) {
    const size_t digits = std::to_string(start).size();
    uint64_t top = 9;
    for (size_t i = 1; i < digits; ++i) top = top * 10 + 9;
    const uint64_t end = std::min(hi, top);
    same_length(std::to_string(start), std::to_string(end), "", out);
    if (end == hi) break;
    start = end + 1;
  }
}

std::string alternatives(const std::vector<std::string>& alts) {
  std::string s = "(";
  for (size_t i = 0; i < alts.size(); ++i) s += (i ? " | " : "") + alts[i];
  return s + ")";
}

}  // namespace

std::string integer_range_gbnf(int64_t lo, int64_t hi) {
  std::vector<std::string> alts;
  if (lo < 0) {
    std::vector<std::string> neg;
    non_negative(static_cast<uint64_t>(hi < 0 ? -hi : 1), static_cast<uint64_t>(-lo), &neg);
    alts.push_back("\"-\" " + alternatives(neg));
  }
  if (hi >= 0)
    non_negative(static_cast<uint64_t>(std::max<int64_t>(lo, 0)), static_cast<uint64_t>(hi), &alts);
  return alternatives(alts);
}

std::string number_range_gbnf(int64_t lo, int64_t hi, const std::string& frac) {
  std::vector<std::string> alts{integer_range_gbnf(lo, hi)};
  // k.f with k >= 0 lies in [k, k+1]: needs lo <= k and k + 1 <= hi.
  const int64_t pos_lo = std::max<int64_t>(lo, 0);
  if (pos_lo <= hi - 1) alts.push_back(integer_range_gbnf(pos_lo, hi - 1) + " \".\" " + frac);
  // -m.f lies in [-(m+1), -m]: needs lo <= -(m+1) and -m <= hi, with m >= 0 ("-0.5").
  const int64_t neg_lo = std::max<int64_t>(0, -hi);
  const int64_t neg_hi = -lo - 1;
  if (neg_lo <= neg_hi) alts.push_back("\"-\" " + integer_range_gbnf(neg_lo, neg_hi) + " \".\" " + frac);
  return alternatives(alts);
}

}  // namespace paddock::sample
