// Rotary position embedding, following ggml_rope_ext: each token's angles come from
// rope_angles (ggml's float steps, YaRN included), so they agree to the last bit.
#include <vector>

#include "backend/ref/kernels.h"
#include "backend/rope_angles.h"
#include "base/check.h"

namespace paddock::ref {

void rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p, const TensorView& dst) {
  PADDOCK_CHECK(x.type == DType::kF32 && dst.type == DType::kF32 && x.same_shape(dst));
  PADDOCK_CHECK(x.ne[3] == 1 && x.ne[2] == static_cast<int64_t>(pos.size()));
  PADDOCK_CHECK(p.n_dims > 0 && p.n_dims % 2 == 0 && p.n_dims <= x.ne[0]);
  PADDOCK_CHECK(p.freq_factors.empty() || static_cast<int64_t>(p.freq_factors.size()) >= p.n_dims / 2);
  const int64_t half = p.n_dims / 2;
  std::vector<float> cs(static_cast<size_t>(p.n_dims));  // (cos, sin) per pair
  for (int64_t t = 0; t < x.ne[2]; ++t) {
    rope_angles(pos[t], p, cs.data());
    for (int64_t h = 0; h < x.ne[1]; ++h) {
      for (int64_t i = 0; i < half; ++i) {
        // Pair members: adjacent for normal mode, half a rotation apart for NeoX.
        const int64_t i0 = p.mode == RopeMode::kNormal ? 2 * i : i;
        const int64_t i1 = p.mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
        const float x0 = x.f32(i0, h, t);
        const float x1 = x.f32(i1, h, t);
        const float c = cs[static_cast<size_t>(2 * i)], s = cs[static_cast<size_t>(2 * i + 1)];
        dst.f32(i0, h, t) = x0 * c - x1 * s;
        dst.f32(i1, h, t) = x0 * s + x1 * c;
      }
      for (int64_t i = p.n_dims; i < x.ne[0]; ++i) dst.f32(i, h, t) = x.f32(i, h, t);
    }
  }
}

}  // namespace paddock::ref
