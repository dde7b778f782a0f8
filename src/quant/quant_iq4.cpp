// IQ4_NL and IQ4_XS: 4-bit indices into the non-linear table kIQ4NLValues. Dequantize and dots
// are ggml's dequantize_row_iq4_* and ggml_vec_dot_iq4_*_generic; the quantizers are ggml's
// quantize_row_iq4_nl_impl as llama-quantize runs it without an importance matrix (7 trials).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/search.h"

namespace paddock {

using quant_detail::best_index_int8;
using quant_detail::kGroupMaxEps;
using quant_detail::nearest_int;

namespace {

constexpr int kNTry = 7;
constexpr int kNValues = static_cast<int>(kIQ4NLValues.size());

int level_index(float x) { return best_index_int8(kNValues, kIQ4NLValues.data(), x); }
float level(int index) { return static_cast<float>(kIQ4NLValues[static_cast<size_t>(index)]); }

// Best scale for one 32-element group (0 for an all-zero group): value ~ scale * level(L).
// Fills L with the levels found along the way.
float search_group_scale(const float* xb, uint8_t* L) {
  float weight[32];
  for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
  float amax = 0;
  float max = 0;
  for (int j = 0; j < 32; ++j) {
    const float ax = std::fabs(xb[j]);
    if (ax > amax) {
      amax = ax;
      max = xb[j];
    }
  }
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, 32);
    return 0;
  }
  float d = -max / level(0);
  float id = 1 / d;
  float sumqx = 0;
  float sumq2 = 0;
  for (int j = 0; j < 32; ++j) {
    const int l = level_index(id * xb[j]);
    L[j] = static_cast<uint8_t>(l);
    const float q = level(l);
    sumqx += weight[j] * q * xb[j];
    sumq2 += weight[j] * q * q;
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;
  for (int itry = -kNTry; itry <= kNTry; ++itry) {
    id = static_cast<float>(itry + kIQ4NLValues[0]) / max;
    sumqx = 0;
    sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
      const float q = level(level_index(id * xb[j]));
      sumqx += weight[j] * q * xb[j];
      sumq2 += weight[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

// Element j of each 32-group in the low nibble of byte j, element j + 16 in the high nibble.
void pack_nibbles(const uint8_t* L, int n, uint8_t* qs) {
  for (int i = 0; i < n / 32; ++i) {
    for (int j = 0; j < 16; ++j)
      qs[16 * i + j] = static_cast<uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
  }
}

}  // namespace

void dequantize_row_iq4_nl(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockIQ4_NL*>(src);
  for (int64_t i = 0; i < n / kQK4_NL; ++i) {
    const float d = fp16_to_f32(x[i].d);
    float* y = dst + i * kQK4_NL;
    for (int j = 0; j < kQK4_NL / 2; ++j) {
      y[j] = d * level(x[i].qs[j] & 0xF);
      y[j + kQK4_NL / 2] = d * level(x[i].qs[j] >> 4);
    }
  }
}

void quantize_row_iq4_nl(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockIQ4_NL*>(dst);
  uint8_t L[kQK4_NL];
  for (int64_t i = 0; i < n / kQK4_NL; ++i) {
    const float* x = src + i * kQK4_NL;
    const float scale = search_group_scale(x, L);
    y[i].d = f32_to_fp16(scale);
    const float id = scale != 0.0f ? 1 / scale : 0;
    for (int j = 0; j < kQK4_NL; ++j) L[j] = static_cast<uint8_t>(level_index(id * x[j]));
    pack_nibbles(L, kQK4_NL, y[i].qs);
  }
}

void vec_dot_iq4_nl_q8_0(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockIQ4_NL*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK4_NL; ++i) {
    const float d = fp16_to_f32(y[i].d) * fp16_to_f32(x[i].d);
    int sumi1 = 0;
    int sumi2 = 0;
    for (int j = 0; j < kQK4_NL / 2; ++j) {
      sumi1 += y[i].qs[j] * kIQ4NLValues[x[i].qs[j] & 0xF];
      sumi2 += y[i].qs[j + kQK4_NL / 2] * kIQ4NLValues[x[i].qs[j] >> 4];
    }
    sumf += d * static_cast<float>(sumi1 + sumi2);
  }
  *out = sumf;
}

namespace {

int iq4_xs_scale(const BlockIQ4_XS& b, int ib) {
  return ((b.scales_l[ib / 2] >> 4 * (ib % 2)) & 0xF) | (((b.scales_h >> 2 * ib) & 3) << 4);
}

}  // namespace

void dequantize_row_iq4_xs(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(src);
  float* y = dst;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const uint8_t* qs = x[i].qs;
    const float d = fp16_to_f32(x[i].d);
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const float dl = d * static_cast<float>(iq4_xs_scale(x[i], ib) - 32);
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * level(qs[j] & 0xF);
        y[j + 16] = dl * level(qs[j] >> 4);
      }
      y += 32;
      qs += 16;
    }
  }
}

void quantize_row_iq4_xs(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockIQ4_XS*>(dst);
  uint8_t L[kQK_K];
  float scales[kQK_K / 32];
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float* x = src + i * kQK_K;
    float max_scale = 0;
    float amax_scale = 0;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      scales[ib] = search_group_scale(x + 32 * ib, L + 32 * ib);
      if (std::fabs(scales[ib]) > amax_scale) {
        amax_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    // Group scales become 6-bit multiples (offset 32) of one fp16 super-block scale; the levels
    // are then chosen again for the rounded group scale.
    y[i].scales_h = 0;
    const float d = -max_scale / 32;
    y[i].d = f32_to_fp16(d);
    const float id = d != 0.0f ? 1 / d : 0.f;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      int l = std::clamp(nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0.0f ? 1 / dl : 0.f;
      for (int j = 0; j < 32; ++j) L[32 * ib + j] = static_cast<uint8_t>(level_index(idl * x[32 * ib + j]));
      l += 32;
      const auto l_l = static_cast<uint8_t>(l & 0xF);
      const auto l_h = static_cast<uint16_t>(l >> 4);
      if (ib % 2 == 0) {
        y[i].scales_l[ib / 2] = l_l;
      } else {
        y[i].scales_l[ib / 2] |= static_cast<uint8_t>(l_l << 4);
      }
      y[i].scales_h |= static_cast<uint16_t>(l_h << 2 * (ib % 8));
    }
    pack_nibbles(L, kQK_K, y[i].qs);
  }
}

void vec_dot_iq4_xs_q8_K(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockIQ4_XS*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  float sumf = 0;
  for (int64_t ibl = 0; ibl < n / kQK_K; ++ibl) {
    const float d4d8 = fp16_to_f32(x[ibl].d) * y[ibl].d;
    const uint8_t* qs = x[ibl].qs;
    const int8_t* q8 = y[ibl].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const float dl = d4d8 * static_cast<float>(iq4_xs_scale(x[ibl], ib) - 32);
      int sumi1 = 0;
      int sumi2 = 0;
      for (int j = 0; j < 16; ++j) {
        sumi1 += q8[j] * kIQ4NLValues[qs[j] & 0xF];
        sumi2 += q8[j + 16] * kIQ4NLValues[qs[j] >> 4];
      }
      sumf += dl * static_cast<float>(sumi1 + sumi2);
      qs += 16;
      q8 += 32;
    }
  }
  *out = sumf;
}

}  // namespace paddock
