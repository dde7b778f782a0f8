// Reading rows of any type as F32, and the F32 dot product every matmul uses.
#include "backend/ref/kernels.h"
#include "base/check.h"
#include "quant/quant.h"

namespace paddock::ref {

bool can_read_rows(DType t) {
  const QuantOps* ops = quant_ops(t);
  return ops != nullptr && ops->dequantize_row != nullptr;
}

void read_row(DType t, const void* src, float* dst, int64_t n) {
  const QuantOps* ops = quant_ops(t);
  PADDOCK_CHECK_MSG(ops != nullptr && ops->dequantize_row != nullptr, "type has no dequantizer");
  ops->dequantize_row(src, dst, n);
}

float dot_f32(const float* a, const float* b, int64_t n) {
  // Eight float lanes like ggml's SIMD accumulators (the compiler keeps them in registers
  // and may vectorise); the lanes and the tail are summed in double.
  float l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    l0 += a[i] * b[i];
    l1 += a[i + 1] * b[i + 1];
    l2 += a[i + 2] * b[i + 2];
    l3 += a[i + 3] * b[i + 3];
    l4 += a[i + 4] * b[i + 4];
    l5 += a[i + 5] * b[i + 5];
    l6 += a[i + 6] * b[i + 6];
    l7 += a[i + 7] * b[i + 7];
  }
  double sum = (double(l0) + l1 + l2 + l3) + (double(l4) + l5 + l6 + l7);
  for (; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(sum);
}

}  // namespace paddock::ref
