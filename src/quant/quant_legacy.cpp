// The 32-element block types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1: ggml's quantize_row_*_ref,
// dequantize_row_* and ggml_vec_dot_*_generic, with the same operation order so results match
// bit for bit.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/lanes8.h"

namespace paddock {

namespace {

uint32_t load_qh(const uint8_t (&qh)[4]) {
  uint32_t v;
  std::memcpy(&v, qh, sizeof v);
  return v;
}

void store_qh(uint8_t (&qh)[4], uint32_t v) { std::memcpy(qh, &v, sizeof v); }

// The value of largest magnitude, with its sign (the symmetric types map it to the extreme level).
float signed_absmax(const float* x, int n) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, int n, float* min, float* max) {
  *min = x[0];
  *max = x[0];
  for (int j = 1; j < n; ++j) {
    *min = std::min(*min, x[j]);
    *max = std::max(*max, x[j]);
  }
}

}  // namespace

void dequantize_row_q4_0(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(src);
  for (int64_t i = 0; i < n / kQK4_0; ++i) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const int x0 = (x[i].qs[j] & 0x0F) - 8;
      const int x1 = (x[i].qs[j] >> 4) - 8;
      dst[i * kQK4_0 + j] = static_cast<float>(x0) * d;
      dst[i * kQK4_0 + j + kQK4_0 / 2] = static_cast<float>(x1) * d;
    }
  }
}

void quantize_row_q4_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_0*>(dst);
  for (int64_t i = 0; i < n / kQK4_0; ++i) {
    const float* x = src + i * kQK4_0;
    const float d = signed_absmax(x, kQK4_0) / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>(x[j] * id + 8.5f));
      const int q1 = std::min(15, static_cast<int>(x[j + kQK4_0 / 2] * id + 8.5f));
      y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void vec_dot_q4_0_q8_0(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ4_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    int sumi0 = 0;
    int sumi1 = 0;
    for (int j = 0; j < kQK8_0 / 2; ++j) {
      const int v0 = (x[i].qs[j] & 0x0F) - 8;
      const int v1 = (x[i].qs[j] >> 4) - 8;
      sumi0 += v0 * y[i].qs[j];
      sumi1 += v1 * y[i].qs[j + kQK8_0 / 2];
    }
    sum += static_cast<float>(sumi0 + sumi1) * fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d);
  }
  *out = sum;
}

void dequantize_row_q4_1(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(src);
  for (int64_t i = 0; i < n / kQK4_1; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const float m = fp16_to_f32(x[i].m);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      const int x0 = x[i].qs[j] & 0x0F;
      const int x1 = x[i].qs[j] >> 4;
      dst[i * kQK4_1 + j] = static_cast<float>(x0) * d + m;
      dst[i * kQK4_1 + j + kQK4_1 / 2] = static_cast<float>(x1) * d + m;
    }
  }
}

void quantize_row_q4_1(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_1*>(dst);
  for (int64_t i = 0; i < n / kQK4_1; ++i) {
    const float* x = src + i * kQK4_1;
    float min;
    float max;
    min_max(x, kQK4_1, &min, &max);
    const float d = (max - min) / ((1 << 4) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(min);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>((x[j] - min) * id + 0.5f));
      const int q1 = std::min(15, static_cast<int>((x[j + kQK4_1 / 2] - min) * id + 0.5f));
      y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void vec_dot_q4_1_q8_1(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ4_1*>(vx);
  const auto* y = static_cast<const BlockQ8_1*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_1; ++i) {
    int sumi0 = 0;
    int sumi1 = 0;
    for (int j = 0; j < kQK8_1 / 2; ++j) {
      sumi0 += (x[i].qs[j] & 0x0F) * y[i].qs[j];
      sumi1 += (x[i].qs[j] >> 4) * y[i].qs[j + kQK8_1 / 2];
    }
    sum += (fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d)) * static_cast<float>(sumi0 + sumi1) +
           fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  *out = sum;
}

void dequantize_row_q5_0(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(src);
  for (int64_t i = 0; i < n / kQK5_0; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < kQK5_0 / 2; ++j) {
      const int xh0 = static_cast<int>(((qh >> j) << 4) & 0x10);
      const int xh1 = static_cast<int>((qh >> (j + 12)) & 0x10);
      const int x0 = ((x[i].qs[j] & 0x0F) | xh0) - 16;
      const int x1 = ((x[i].qs[j] >> 4) | xh1) - 16;
      dst[i * kQK5_0 + j] = static_cast<float>(x0) * d;
      dst[i * kQK5_0 + j + kQK5_0 / 2] = static_cast<float>(x1) * d;
    }
  }
}

void quantize_row_q5_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_0*>(dst);
  for (int64_t i = 0; i < n / kQK5_0; ++i) {
    const float* x = src + i * kQK5_0;
    const float d = signed_absmax(x, kQK5_0) / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_0 / 2; ++j) {
      const int q0 = std::min(31, static_cast<int>(x[j] * id + 16.5f));
      const int q1 = std::min(31, static_cast<int>(x[j + kQK5_0 / 2] * id + 16.5f));
      y[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((q0 & 0x10) >> 4) << j;
      qh |= static_cast<uint32_t>((q1 & 0x10) >> 4) << (j + kQK5_0 / 2);
    }
    store_qh(y[i].qh, qh);
  }
}

void vec_dot_q5_0_q8_0(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ5_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    const uint32_t qh = load_qh(x[i].qh);
    int sumi0 = 0;
    int sumi1 = 0;
    for (int j = 0; j < kQK8_0 / 2; ++j) {
      const int xh0 = static_cast<int>(((qh >> j) << 4) & 0x10);
      const int xh1 = static_cast<int>((qh >> (j + 12)) & 0x10);
      sumi0 += (((x[i].qs[j] & 0x0F) | xh0) - 16) * y[i].qs[j];
      sumi1 += (((x[i].qs[j] >> 4) | xh1) - 16) * y[i].qs[j + kQK8_0 / 2];
    }
    sum += (fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d)) * static_cast<float>(sumi0 + sumi1);
  }
  *out = sum;
}

void dequantize_row_q5_1(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(src);
  for (int64_t i = 0; i < n / kQK5_1; ++i) {
    const float d = fp16_to_f32(x[i].d);
    const float m = fp16_to_f32(x[i].m);
    const uint32_t qh = load_qh(x[i].qh);
    for (int j = 0; j < kQK5_1 / 2; ++j) {
      const int xh0 = static_cast<int>(((qh >> j) << 4) & 0x10);
      const int xh1 = static_cast<int>((qh >> (j + 12)) & 0x10);
      const int x0 = (x[i].qs[j] & 0x0F) | xh0;
      const int x1 = (x[i].qs[j] >> 4) | xh1;
      dst[i * kQK5_1 + j] = static_cast<float>(x0) * d + m;
      dst[i * kQK5_1 + j + kQK5_1 / 2] = static_cast<float>(x1) * d + m;
    }
  }
}

void quantize_row_q5_1(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_1*>(dst);
  for (int64_t i = 0; i < n / kQK5_1; ++i) {
    const float* x = src + i * kQK5_1;
    float min;
    float max;
    min_max(x, kQK5_1, &min, &max);
    const float d = (max - min) / ((1 << 5) - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_1 / 2; ++j) {
      // ggml does not clamp here: (max - min) * id rounds to at most 31.
      const int q0 = static_cast<uint8_t>((x[j] - min) * id + 0.5f);
      const int q1 = static_cast<uint8_t>((x[j + kQK5_1 / 2] - min) * id + 0.5f);
      y[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((q0 & 0x10) >> 4) << j;
      qh |= static_cast<uint32_t>((q1 & 0x10) >> 4) << (j + kQK5_1 / 2);
    }
    store_qh(y[i].qh, qh);
  }
}

void vec_dot_q5_1_q8_1(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ5_1*>(vx);
  const auto* y = static_cast<const BlockQ8_1*>(vy);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_1; ++i) {
    const uint32_t qh = load_qh(x[i].qh);
    int sumi0 = 0;
    int sumi1 = 0;
    for (int j = 0; j < kQK8_1 / 2; ++j) {
      const int xh0 = static_cast<int>(((qh >> j) << 4) & 0x10);
      const int xh1 = static_cast<int>((qh >> (j + 12)) & 0x10);
      sumi0 += ((x[i].qs[j] & 0x0F) | xh0) * y[i].qs[j];
      sumi1 += ((x[i].qs[j] >> 4) | xh1) * y[i].qs[j + kQK8_1 / 2];
    }
    sum += (fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d)) * static_cast<float>(sumi0 + sumi1) +
           fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  *out = sum;
}

void dequantize_row_q8_0(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < kQK8_0; ++j) dst[i * kQK8_0 + j] = static_cast<float>(x[i].qs[j]) * d;
  }
}

namespace {

// Q8_0 / Q8_1 rows (Q8_1 also stores d * sum(q)). kX86: ggml-cpu's x86 from_float (scale
// 127 / amax, x * scale rounded half to even); else ggml's reference quantizer (scale
// 1 / (amax / 127), rounded half away from zero), which llama-quantize uses for weights.
template <typename Block, bool kSum, bool kX86>
void quantize_q8(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<Block*>(dst);
  for (int64_t i = 0; i < n / 32; ++i) {
    const float* x = src + i * 32;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / ((1 << 7) - 1);
    const float id = kX86 ? (amax != 0.0f ? 127.0f / amax : 0.0f) : (d != 0.0f ? 1.0f / d : 0.0f);
    y[i].d = f32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      y[i].qs[j] = static_cast<int8_t>(kX86 ? std::nearbyint(x[j] * id) : std::round(x[j] * id));
      sum += y[i].qs[j];
    }
    if constexpr (kSum) y[i].s = f32_to_fp16(static_cast<float>(sum) * d);
  }
}

}  // namespace

void quantize_row_q8_0(const float* src, void* dst, int64_t n) {
  quantize_q8<BlockQ8_0, false, false>(src, dst, n);
}
void quantize_row_q8_1(const float* src, void* dst, int64_t n) {
  quantize_q8<BlockQ8_1, true, false>(src, dst, n);
}
void quantize_row_q8_0_x86(const float* src, void* dst, int64_t n) {
  quantize_q8<BlockQ8_0, false, true>(src, dst, n);
}
void quantize_row_q8_1_x86(const float* src, void* dst, int64_t n) {
  quantize_q8<BlockQ8_1, true, true>(src, dst, n);
}

// In ggml's AVX2 order (quant/lanes8.h), as the golden files were computed.
void vec_dot_q8_0_q8_0(int64_t n, float* out, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ8_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  Lanes8 sum;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    std::array<int32_t, 8> lane{};
    for (int j = 0; j < kQK8_0; ++j) lane[static_cast<size_t>(j / 4)] += x[i].qs[j] * y[i].qs[j];
    sum.fma(fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d), lane);
  }
  *out = sum.sum();
}

// ggml has no Q8_1 to_float; this one is the obvious inverse, for tests and tools.
void dequantize_row_q8_1(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const BlockQ8_1*>(src);
  for (int64_t i = 0; i < n / kQK8_1; ++i) {
    const float d = fp16_to_f32(x[i].d);
    for (int j = 0; j < kQK8_1; ++j) dst[i * kQK8_1 + j] = static_cast<float>(x[i].qs[j]) * d;
  }
}

}  // namespace paddock
