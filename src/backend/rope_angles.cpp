#include "backend/rope_angles.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace paddock {

namespace {

// The rotary dimension at which a frequency turns n_rot times over the original context.
float yarn_corr_dim(int32_t n_dims, int32_t n_ctx_orig, float n_rot, float base) {
  return static_cast<float>(n_dims) *
         std::log(static_cast<float>(n_ctx_orig) / (n_rot * 2.0f * std::numbers::pi_v<float>)) /
         (2.0f * std::log(base));
}

// 1 below the ramp (extrapolate: high frequencies keep their angle), 0 above it.
float yarn_ramp(float low, float high, int64_t i0) {
  const float y = (static_cast<float>(i0 / 2) - low) / std::max(0.001f, high - low);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

void rope_angles(int32_t pos, const RopeParams& p, float* out) {
  const int64_t half = p.n_dims / 2;
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_dims));
  float low = 0, high = 0;
  float mscale = p.attn_factor;
  if (p.ext_factor != 0.0f) {
    low = std::max(0.0f, std::floor(yarn_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_fast, p.freq_base)));
    high = std::min(static_cast<float>(p.n_dims - 1),
                    std::ceil(yarn_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_slow, p.freq_base)));
    mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
  }
  float theta = static_cast<float>(pos);
  for (int64_t i = 0; i < half; ++i) {
    const float factor = p.freq_factors.empty() ? 1.0f : p.freq_factors[static_cast<size_t>(i)];
    const float extrap = theta / factor;
    float angle = p.freq_scale * extrap;
    if (p.ext_factor != 0.0f) {
      const float mix = yarn_ramp(low, high, 2 * i) * p.ext_factor;
      angle = angle * (1 - mix) + extrap * mix;
    }
    out[2 * i] = std::cos(angle) * mscale;
    out[2 * i + 1] = std::sin(angle) * mscale;
    theta *= theta_scale;
  }
}

}  // namespace paddock
