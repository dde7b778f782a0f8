// Row-wise reductions: RMS norm and LayerNorm's normalisation. Sums run in double, as ggml's do.
#include <cmath>
#include <vector>

#include "backend/ref/kernels.h"
#include "base/check.h"

namespace paddock::ref {

void rms_norm(const TensorView& x, float eps, const TensorView& dst) {
  PADDOCK_CHECK(x.type == DType::kF32 && dst.type == DType::kF32 && x.same_shape(dst));
  for (int64_t i3 = 0; i3 < x.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < x.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < x.ne[1]; ++i1) {
        double sum = 0;
        for (int64_t i0 = 0; i0 < x.ne[0]; ++i0) {
          const float v = x.f32(i0, i1, i2, i3);
          sum += static_cast<double>(v * v);
        }
        const float mean = static_cast<float>(sum / static_cast<double>(x.ne[0]));
        const float scale = 1.0f / std::sqrt(mean + eps);
        for (int64_t i0 = 0; i0 < x.ne[0]; ++i0) dst.f32(i0, i1, i2, i3) = x.f32(i0, i1, i2, i3) * scale;
      }
    }
  }
}

void norm(const TensorView& x, float eps, const TensorView& dst) {
  PADDOCK_CHECK(x.type == DType::kF32 && dst.type == DType::kF32 && x.same_shape(dst));
  const auto n = static_cast<double>(x.ne[0]);
  for (int64_t i3 = 0; i3 < x.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < x.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < x.ne[1]; ++i1) {
        double sum = 0;
        for (int64_t i0 = 0; i0 < x.ne[0]; ++i0) sum += static_cast<double>(x.f32(i0, i1, i2, i3));
        const auto mean = static_cast<float>(sum / n);
        double sum2 = 0;
        for (int64_t i0 = 0; i0 < x.ne[0]; ++i0) {
          const float d = x.f32(i0, i1, i2, i3) - mean;
          sum2 += static_cast<double>(d * d);
        }
        const float scale = 1.0f / std::sqrt(static_cast<float>(sum2 / n) + eps);
        for (int64_t i0 = 0; i0 < x.ne[0]; ++i0) dst.f32(i0, i1, i2, i3) = (x.f32(i0, i1, i2, i3) - mean) * scale;
      }
    }
  }
}

}  // namespace paddock::ref
