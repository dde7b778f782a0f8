// Per-type round-trip error budgets shared by the quant tests (relative RMSE, see
// test_data.h), one row per quantizable type of the table.
//   const Budget* b = budget_for(DType::kQ4_K);
#pragma once

#include "tensor/dtype.h"

namespace paddock::quant_test {

struct Budget {
  DType type;
  double gaussian;    // relative RMSE on N(0, 1) rows
  double structured;  // relative RMSE on a smooth row with a slow trend (min-offset friendly)
};

// Measured on these exact inputs (gaussian / structured: Q8_0 0.0054 / 0.0030, Q4_0 0.085 /
// 0.046, Q4_K 0.071 / 0.023, Q2_K 0.30 / 0.091, IQ4_XS 0.077 / 0.055, MXFP4 0.116 / 0.112) and
// set ~20% above: tight enough that a wrong level, scale or rounding shows, loose enough to
// survive compilers.
constexpr Budget kBudgets[] = {
    {DType::kF32, 0.0, 0.0},        {DType::kF16, 0.00025, 0.00025}, {DType::kBF16, 0.002, 0.002},
    {DType::kQ8_0, 0.0065, 0.0036}, {DType::kQ8_1, 0.0065, 0.0036},  {DType::kQ8_K, 0.0085, 0.0045},
    {DType::kQ4_0, 0.10, 0.055},    {DType::kQ4_1, 0.095, 0.017},    {DType::kQ5_0, 0.051, 0.028},
    {DType::kQ5_1, 0.046, 0.008},   {DType::kQ2_K, 0.36, 0.11},      {DType::kQ3_K, 0.18, 0.09},
    {DType::kQ4_K, 0.086, 0.028},   {DType::kQ5_K, 0.044, 0.014},    {DType::kQ6_K, 0.021, 0.0115},
    {DType::kIQ4_NL, 0.092, 0.066}, {DType::kIQ4_XS, 0.092, 0.066},  {DType::kMXFP4, 0.14, 0.135},
};

inline const Budget* budget_for(DType t) {
  for (const Budget& b : kBudgets) {
    if (b.type == t) return &b;
  }
  return nullptr;
}

}  // namespace paddock::quant_test
