// MXFP4: 4-bit indices into kMXFP4Values (doubled E2M1) with one E8M0 exponent per 32 elements.
// Dequantize and the quantizer are ggml's dequantize_row_mxfp4 and quantize_row_mxfp4_ref; the
// dot is ggml_vec_dot_mxfp4_q8_0 as its AVX2 build sums it.
#include <array>
#include <cmath>

#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/lanes8.h"

namespace paddock {

namespace {

float level(int index) { return static_cast<float>(kMXFP4Values[static_cast<size_t>(index)]); }

// The first index of least |level * d - x|: ties go to the lower index, so zero is never -0.
int nearest_level(float x, float d) {
  int best = 0;
  float best_err = std::fabs(level(0) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(level(i) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void dequantize_row_mxfp4(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockMXFP4*>(src);
  for (int64_t i = 0; i < n / kQKMXFP4; ++i) {
    const float d = e8m0_half(x[i].e);
    float* y = dst + i * kQKMXFP4;
    for (int j = 0; j < kQKMXFP4 / 2; ++j) {
      y[j] = level(x[i].qs[j] & 0xF) * d;
      y[j + kQKMXFP4 / 2] = level(x[i].qs[j] >> 4) * d;
    }
  }
}

void quantize_row_mxfp4(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockMXFP4*>(dst);
  for (int64_t i = 0; i < n / kQKMXFP4; ++i) {
    const float* x = src + i * kQKMXFP4;
    float amax = 0;
    for (int j = 0; j < kQKMXFP4; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    // amax in [2^k, 2^(k+1)) gives the half scale 2^(k-3): the largest level 12 then is
    // 1.5 * 2^k, and larger values saturate to it (ggml's choice, not round-to-nearest scale).
    // Groups below 2^-125 would need e < 0; ggml's float-to-uint8 cast is undefined there, so
    // they clamp to the smallest scale.
    const int e = amax > 0 ? static_cast<int>(std::floor(std::log2(amax))) + 125 : 0;
    y[i].e = static_cast<uint8_t>(e < 0 ? 0 : e);
    const float d = e8m0_half(y[i].e);
    for (int j = 0; j < kQKMXFP4 / 2; ++j) {
      const int lo = nearest_level(x[j], d);
      const int hi = nearest_level(x[j + kQKMXFP4 / 2], d);
      y[i].qs[j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

// ggml's AVX2 order (quant/lanes8.h): even and odd blocks in two lane sets, added before the
// horizontal sum; an odd last block is added after it, as ggml's scalar tail.
void vec_dot_mxfp4_q8_0(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockMXFP4*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  const int64_t nb = n / kQKMXFP4;
  Lanes8 sums[2];
  const auto lanes = [&](int64_t i) {
    std::array<int32_t, 8> lane{};
    for (int j = 0; j < kQKMXFP4 / 2; ++j) {
      lane[static_cast<size_t>(j / 4)] += y[i].qs[j] * kMXFP4Values[x[i].qs[j] & 0xF];
      lane[static_cast<size_t>(4 + j / 4)] += y[i].qs[j + kQKMXFP4 / 2] * kMXFP4Values[x[i].qs[j] >> 4];
    }
    return lane;
  };
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    for (int64_t b = i; b < i + 2; ++b) sums[b - i].fma(fp16_to_f32(y[b].d) * e8m0_half(x[b].e), lanes(b));
  }
  sums[0].add(sums[1]);
  float sumf = sums[0].sum();
  if (i < nb) {
    int32_t sumi = 0;
    for (const int32_t v : lanes(i)) sumi += v;
    sumf += fp16_to_f32(y[i].d) * e8m0_half(x[i].e) * static_cast<float>(sumi);
  }
  *out = sumf;
}

}  // namespace paddock
