// Deterministic test inputs for the quant tests: Gaussian noise from a seeded mt19937 (whose
// output the standard fixes, unlike std::normal_distribution's) and the error measure.
//   std::vector<float> x = gaussian_row(1024, /*seed=*/7);
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace paddock::quant_test {

inline std::vector<float> gaussian_row(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  auto uniform = [&rng] { return (static_cast<double>(rng()) + 0.5) / 4294967296.0; };
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    x[i] = static_cast<float>(sigma * r * std::cos(6.283185307179586 * uniform()));
  }
  return x;
}

// RMS of (a - b) divided by the RMS of a; 0 when both are all zero.
inline double relative_rmse(std::span<const float> a, std::span<const float> b) {
  double err = 0;
  double ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    err += d * d;
    ref += static_cast<double>(a[i]) * a[i];
  }
  if (ref == 0) return err == 0 ? 0 : INFINITY;
  return std::sqrt(err / ref);
}

}  // namespace paddock::quant_test
