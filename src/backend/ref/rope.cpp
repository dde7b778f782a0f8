// Rotary position embedding, following ggml_rope_ext (no YaRN): the angle of pair i is
// pos * freq_scale * freq_base^(-2i/n_dims) / factor_i, the power built by repeated float
// multiplication exactly as ggml builds its cache, so angles agree to the last bit.
#include <cmath>
#include <vector>

#include "backend/ref/kernels.h"
#include "base/check.h"

namespace paddock::ref {

void rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p, const TensorView& dst) {
  PADDOCK_CHECK(x.type == DType::kF32 && dst.type == DType::kF32 && x.same_shape(dst));
  PADDOCK_CHECK(x.ne[3] == 1 && x.ne[2] == static_cast<int64_t>(pos.size()));
  PADDOCK_CHECK(p.n_dims > 0 && p.n_dims % 2 == 0 && p.n_dims <= x.ne[0]);
  PADDOCK_CHECK(p.freq_factors.empty() || static_cast<int64_t>(p.freq_factors.size()) >= p.n_dims / 2);
  const int64_t half = p.n_dims / 2;
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_dims));
  std::vector<float> cos_cache(static_cast<size_t>(half));
  std::vector<float> sin_cache(static_cast<size_t>(half));
  for (int64_t t = 0; t < x.ne[2]; ++t) {
    float theta = static_cast<float>(pos[t]);
    for (int64_t i = 0; i < half; ++i) {
      const float factor = p.freq_factors.empty() ? 1.0f : p.freq_factors[i];
      const float angle = p.freq_scale * (theta / factor);
      cos_cache[i] = std::cos(angle);
      sin_cache[i] = std::sin(angle);
      theta *= theta_scale;
    }
    for (int64_t h = 0; h < x.ne[1]; ++h) {
      for (int64_t i = 0; i < half; ++i) {
        // Pair members: adjacent for normal mode, half a rotation apart for NeoX.
        const int64_t i0 = p.mode == RopeMode::kNormal ? 2 * i : i;
        const int64_t i1 = p.mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
        const float x0 = x.f32(i0, h, t);
        const float x1 = x.f32(i1, h, t);
        dst.f32(i0, h, t) = x0 * cos_cache[i] - x1 * sin_cache[i];
        dst.f32(i1, h, t) = x0 * sin_cache[i] + x1 * cos_cache[i];
      }
      for (int64_t i = p.n_dims; i < x.ne[0]; ++i) dst.f32(i, h, t) = x.f32(i, h, t);
    }
  }
}

}  // namespace paddock::ref
