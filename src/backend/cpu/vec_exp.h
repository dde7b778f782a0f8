// e^x over a row of floats on the SIMD paths, shared by attention's softmax and swiglu.
//   if (ExpFn f = exp_avx2_kernel()) f(x, y, n);
#pragma once

#include <cstdint>

namespace paddock::cpu {

// y[i] = e^x[i] as the AVX2 softmax computes it (y may be x): within 2 ulp
// of std::exp for x in [-87.33, 88]; 0 below (-inf included), e^88 above; never NaN for a
// non-NaN x. nullptr on non-x86 builds; call it only where the CPU has AVX2+FMA.
using ExpFn = void (*)(const float* x, float* y, int64_t n);
ExpFn exp_avx2_kernel();

}  // namespace paddock::cpu
