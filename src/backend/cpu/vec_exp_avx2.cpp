// exp_rows (vec_exp.h): the AVX2 e^x of vec_exp_x86.h over a row, the tail through a padded vector.
#include "backend/cpu/vec_exp.h"
#include "backend/cpu/vec_exp_x86.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

PADDOCK_TARGET_AVX2 void exp_rows(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    float in[8] = {}, out[8];
    for (int64_t k = i; k < n; ++k) in[k - i] = x[k];
    _mm256_storeu_ps(out, exp8(_mm256_loadu_ps(in)));
    for (int64_t k = i; k < n; ++k) y[k] = out[k - i];
  }
}

}  // namespace

ExpFn exp_avx2_kernel() { return exp_rows; }

#else

ExpFn exp_avx2_kernel() { return nullptr; }

#endif

}  // namespace paddock::cpu
