#include "backend/f16_attention_row.h"

#include <cmath>

namespace paddock {

namespace {

float dot(const uint16_t* q, const uint16_t* k, int64_t n) {
  const int64_t n32 = n / 32 * 32;
  float acc[4][8] = {};
  for (int64_t i = 0; i < n32; i += 32) {
    for (int w = 0; w < 4; ++w) {
      for (int l = 0; l < 8; ++l) {
        const int64_t x = i + w * 8 + l;
        acc[w][l] = std::fma(fp16_to_f32(q[x]), fp16_to_f32(k[x]), acc[w][l]);
      }
    }
  }
  float t[4];
  for (int l = 0; l < 4; ++l) {
    t[l] = ((acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])) +
           ((acc[0][l + 4] + acc[2][l + 4]) + (acc[1][l + 4] + acc[3][l + 4]));
  }
  double sum = (t[0] + t[1]) + (t[2] + t[3]);
  for (int64_t i = n32; i < n; ++i) sum += static_cast<double>(fp16_to_f32(q[i]) * fp16_to_f32(k[i]));
  return static_cast<float>(sum);
}

void scale(uint16_t* acc, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) acc[i] = f32_to_fp16(fp16_to_f32(acc[i]) * s);
}

void mad(uint16_t* acc, const uint16_t* v, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) acc[i] = f32_to_fp16(std::fma(fp16_to_f32(v[i]), s, fp16_to_f32(acc[i])));
}

constexpr F16Ops kScalar = {dot, scale, mad, nullptr};

}  // namespace

const F16Ops& f16_ops_scalar() { return kScalar; }

void f16_walk(const F16Ops& ops, const uint16_t* q16, int rows, int64_t d_k, int64_t d_v, const F16Cells& cells,
              float kq_scale, float softcap, float* m, float* l, uint16_t* acc) {
  if (ops.walk != nullptr && d_k % 8 == 0 && d_v % 8 == 0 && rows <= 64) {
    ops.walk(q16, rows, d_k, d_v, cells, kq_scale, softcap, m, l, acc);
    return;
  }
  for (int r = 0; r < rows; ++r) {
    uint16_t* a = acc + r * d_v;
    for (int64_t j = 0; j < cells.n; ++j) {
      float x = ops.dot(q16 + r * d_k, cells.k[j], d_k) * kq_scale;
      if (softcap > 0) x = softcap * std::tanh(x);
      float ms = 1.0f, vs = 1.0f;
      if (x > m[r]) {
        ms = std::exp(m[r] - x);
        m[r] = x;
        ops.scale(a, d_v, ms);
      } else {
        vs = std::exp(x - m[r]);
      }
      ops.mad(a, cells.v[j], d_v, vs);
      l[r] = std::fma(l[r], ms, vs);
    }
  }
}

}  // namespace paddock
