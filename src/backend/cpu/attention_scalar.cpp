// The portable attention tile kernels (PADDOCK_CPU=scalar): plain loops with std::exp, and
// the quant table's reference dequantizers; and the per-path table lookup.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_kernels.h"
#include "base/fp16.h"
#include "quant/quant.h"

namespace paddock::cpu {

namespace {

void scores(const float* q, const float* qt, const float* k, int64_t dk, int rows, int64_t rs, int nc,
            float scale, float* s) {
  if (rows > kAttnDotRows) {
    const int64_t qs = (rows + 7) / 8 * 8;
    for (int j = 0; j < nc; ++j) {
      float* out = s + j * rs;
      std::fill(out, out + rows, 0.0f);
      for (int64_t i = 0; i < dk; ++i) {
        const float kji = k[j * dk + i];
        for (int r = 0; r < rows; ++r) out[r] += qt[i * qs + r] * kji;
      }
      for (int r = 0; r < rows; ++r) out[r] *= scale;
    }
    return;
  }
  for (int j = 0; j < nc; ++j) {
    for (int r = 0; r < rows; ++r) {
      const float* qr = q + r * dk;
      const float* kj = k + j * dk;
      // Eight partial sums, like the ref backend's dot, so the compiler may vectorise.
      float acc[8] = {};
      for (int64_t i = 0; i < dk; i += 8) {
        for (int l = 0; l < 8; ++l) acc[l] += qr[i + l] * kj[i + l];
      }
      float sum = 0;
      for (float a : acc) sum += a;
      s[j * rs + r] = sum * scale;
    }
  }
}

void softmax(float* s, int64_t rs, int nc, const int32_t* lim, float* m, float* l, float* c) {
  for (int64_t r = 0; r < rs; ++r) {
    float m_new = m[r];
    for (int j = 0; j < nc && j <= lim[r]; ++j) m_new = std::max(m_new, s[j * rs + r]);
    // A row that has seen nothing yet subtracts 0, so its p stay 0 and no -inf - -inf occurs.
    const float base = m_new == -INFINITY ? 0.0f : m_new;
    c[r] = std::exp(m[r] - base);
    float sum = 0;
    for (int j = 0; j < nc; ++j) {
      float& p = s[j * rs + r];
      p = j <= lim[r] ? std::exp(p - base) : 0.0f;
      sum += p;
    }
    m[r] = m_new;
    l[r] = l[r] * c[r] + sum;
  }
}

void pv(const float* p, int64_t rs, const float* v, int64_t dv, int rows, int nc, const float* c,
        float* acc) {
  for (int r = 0; r < rows; ++r) {
    float* out = acc + r * dv;
    for (int64_t i = 0; i < dv; ++i) out[i] *= c[r];
    for (int j = 0; j < nc; ++j) {
      const float pj = p[j * rs + r];
      const float* vj = v + j * dv;
      for (int64_t i = 0; i < dv; ++i) out[i] += pj * vj[i];
    }
  }
}

void f32_row(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void f16_row(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(h[i]);
}

void q8_0_row(const void* src, float* dst, int64_t n) {
  quant_ops(DType::kQ8_0)->dequantize_row(src, dst, n);
}

void q4_0_row(const void* src, float* dst, int64_t n) {
  quant_ops(DType::kQ4_0)->dequantize_row(src, dst, n);
}

template <void (*Row)(const void*, float*, int64_t)>
void tile_to_f32(const TileRows& t, float* dst, int64_t dst_row) {
  for (int j = 0; j < t.cells; ++j) {
    for (int h = 0; h < t.heads; ++h) {
      float* out = dst + (h * kAttnMaxTile + j) * dst_row;
      Row(t.src + static_cast<size_t>(j) * t.cell_stride + static_cast<size_t>(h) * t.head_stride, out, t.n);
      std::fill(out + t.n, out + dst_row, 0.0f);
    }
  }
}

constexpr AttentionKernels kScalar = {scores,
                                      softmax,
                                      pv,
                                      tile_to_f32<f32_row>,
                                      tile_to_f32<f16_row>,
                                      tile_to_f32<q8_0_row>,
                                      tile_to_f32<q4_0_row>,
                                      {nullptr, nullptr},
                                      {nullptr, nullptr},
                                      nullptr};

}  // namespace

const AttentionKernels& attention_kernels_scalar() { return kScalar; }

const AttentionKernels& attention_kernels(CpuIsa isa) {
  const AttentionKernels* simd = isa == CpuIsa::kScalar ? nullptr : attention_kernels_avx2();
  return simd != nullptr ? *simd : kScalar;
}

}  // namespace paddock::cpu
