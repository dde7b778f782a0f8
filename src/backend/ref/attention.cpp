// Attention with grouped KV heads over a KV cache in F16, F32, Q8_0 or Q4_0: for every query
// token and head, scores against the visible cells (attn_visible: causal, windowed or all,
// over cells that hold positions in order or tagged ones; softcapped when asked), a softmax
// (whose denominator a sink may add to), and the weighted sum of V (0 if nothing is seen).
// Quantized K/V rows are dequantized with the quant table's reference functions.
// Over an F16 cache, passes of fewer than 64 tokens round as llama.cpp's flash attention
// (the reference the golden files come from) does: Q to F16, an online softmax cell by cell
// and the weighted sum of V kept in F16 (attention_f16_online; docs/engine.md says why).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/ref/kernels.h"
#include "base/check.h"
#include "base/fp16.h"

namespace paddock::ref {

namespace {

// Below this many tokens ggml's flash attention over an F16 cache runs row by row
// (ggml_compute_forward_flash_attn_ext_f16_one_chunk) with the roundings of
// attention_f16_online; from GGML_FA_TILE_Q = 64 query rows on, its tiled kernel, all F32.
constexpr int64_t kF16RowsMaxTokens = 64;

uint16_t f16(float x) { return f32_to_fp16(x); }

// q . k over F16 rows, summed as ggml_vec_dot_f16 in ggml's AVX-512 build: 4 accumulators
// of 16 lanes with fused multiply-adds, folded 0+2, 1+3, 0+1, the lanes then reduced by
// halves (l + l+8, + l+4, + l+2, + l+1); elements past the last 64 added in double.
float dot_f16(const uint16_t* q, const uint16_t* k, int64_t n) {
  const int64_t n64 = n / 64 * 64;
  float acc[4][16] = {};
  for (int64_t i = 0; i < n64; i += 64) {
    for (int w = 0; w < 4; ++w) {
      for (int l = 0; l < 16; ++l) {
        const int64_t x = i + w * 16 + l;
        acc[w][l] = std::fma(fp16_to_f32(q[x]), fp16_to_f32(k[x]), acc[w][l]);
      }
    }
  }
  float t[16];
  for (int l = 0; l < 16; ++l) t[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  for (int l = 0; l < 8; ++l) t[l] = t[l + 8] + t[l];
  for (int l = 0; l < 4; ++l) t[l] = t[l + 4] + t[l];
  for (int l = 0; l < 2; ++l) t[l] = t[l] + t[l + 2];
  double sum = t[0] + t[1];
  for (int64_t i = n64; i < n; ++i) sum += static_cast<double>(fp16_to_f32(q[i]) * fp16_to_f32(k[i]));
  return static_cast<float>(sum);
}

// ggml's flash attention over an F16 cache, one query row at a time: the row rounded to
// F16; over the visible cells in cell order, the score (dot_f16, times the scale; a softcap
// as ggml applies it) and an online softmax whose weighted sum of V is an F16 vector, every
// update rounded (rescaled by exp(old max - new max) on a new max, then v * exp(s - max)
// added with a fused multiply-add); at the end that sum in F32, a sink joined, divided by
// the sum of the weights.
void attention_f16_online(const TensorView& q, const TensorView& k, const TensorView& v,
                          const std::vector<int32_t>& cell_pos, std::span<const int32_t> pos, const AttnParams& p,
                          const float* sinks, const TensorView& dst) {
  const int64_t d_k = q.ne[0];
  const int64_t n_head = q.ne[1];
  const int64_t n_tokens = q.ne[2];
  const int64_t n_kv = k.ne[2];
  const int64_t d_v = v.ne[0];
  const int64_t group = n_head / k.ne[1];
  const float scale = p.softcap > 0 ? p.scale / p.softcap : p.scale;
  std::vector<uint16_t> q16(static_cast<size_t>(d_k));
  std::vector<uint16_t> acc(static_cast<size_t>(d_v));
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t hk = h / group;
      const float* qrow = reinterpret_cast<const float*>(q.row(h, t));
      for (int64_t i = 0; i < d_k; ++i) q16[static_cast<size_t>(i)] = f16(qrow[i]);
      std::fill(acc.begin(), acc.end(), uint16_t{0});
      float m = -INFINITY, l = 0.0f;
      for (int64_t j = 0; j < n_kv; ++j) {
        if (!attn_visible(p, pos[t], cell_pos[static_cast<size_t>(j)])) continue;
        float s = dot_f16(q16.data(), reinterpret_cast<const uint16_t*>(k.row(hk, j)), d_k) * scale;
        if (p.softcap > 0) s = p.softcap * std::tanh(s);
        float ms = 1.0f, vs = 1.0f;
        if (s > m) {
          ms = std::exp(m - s);
          m = s;
          for (uint16_t& a : acc) a = f16(fp16_to_f32(a) * ms);
        } else {
          vs = std::exp(s - m);
        }
        const auto* vrow = reinterpret_cast<const uint16_t*>(v.row(hk, j));
        for (int64_t i = 0; i < d_v; ++i) {
          acc[static_cast<size_t>(i)] = f16(std::fma(fp16_to_f32(vrow[i]), vs, fp16_to_f32(acc[static_cast<size_t>(i)])));
        }
        l = l * ms + vs;
      }
      float f = 1.0f;  // a sink's rescale of the output
      if (sinks != nullptr) {
        float ms = 1.0f, vs = 1.0f;
        if (sinks[h] > m) {
          ms = std::exp(m - sinks[h]);
          f = ms;
        } else {
          vs = std::exp(sinks[h] - m);
        }
        l = l * ms + vs;
      }
      const float inv = l == 0.0f ? 0.0f : 1.0f / l;
      for (int64_t i = 0; i < d_v; ++i) dst.f32(i, h, t) = fp16_to_f32(acc[static_cast<size_t>(i)]) * f * inv;
    }
  }
}

}  // namespace

void attention(const TensorView& q, const TensorView& k, const TensorView& v, std::span<const int32_t> pos,
               const AttnParams& p, const float* sinks, const TensorView& dst) {
  const int64_t d_k = q.ne[0];
  const int64_t n_head = q.ne[1];
  const int64_t n_tokens = q.ne[2];
  const int64_t n_head_kv = k.ne[1];
  const int64_t n_kv = k.ne[2];
  const int64_t d_v = v.ne[0];
  PADDOCK_CHECK(q.type == DType::kF32 && q.nb[0] == sizeof(float));
  PADDOCK_CHECK(k.ne[0] == d_k && v.ne[1] == n_head_kv && v.ne[2] == n_kv);
  PADDOCK_CHECK(k.type == v.type && (k.type == DType::kF32 || k.type == DType::kF16 ||
                                     k.type == DType::kQ8_0 || k.type == DType::kQ4_0));
  PADDOCK_CHECK(d_k % dtype_info(k.type).block_size == 0 && d_v % dtype_info(v.type).block_size == 0);
  PADDOCK_CHECK(k.nb[0] == dtype_info(k.type).type_size && v.nb[0] == dtype_info(v.type).type_size);
  PADDOCK_CHECK(n_head_kv > 0 && n_head % n_head_kv == 0);
  PADDOCK_CHECK(static_cast<int64_t>(pos.size()) == n_tokens);
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.ne[0] == d_v && dst.ne[1] == n_head && dst.ne[2] == n_tokens);
  const int64_t group = n_head / n_head_kv;

  PADDOCK_CHECK(p.cells.empty() || static_cast<int64_t>(p.cells.size()) == n_kv);
  std::vector<int32_t> cell_pos(p.cells.begin(), p.cells.end());
  if (p.cells.empty()) {
    for (int64_t j = 0; j < n_kv; ++j) cell_pos.push_back(static_cast<int32_t>(j));
  }
  for (int64_t t = 0; t < n_tokens; ++t) PADDOCK_CHECK(pos[t] >= 0 && (!p.cells.empty() || pos[t] < n_kv));
  if (k.type == DType::kF16 && n_tokens < kF16RowsMaxTokens) {
    attention_f16_online(q, k, v, cell_pos, pos, p, sinks, dst);
    return;
  }
  // K and V rows as F32, converted once per call rather than once per query.
  std::vector<float> kf(static_cast<size_t>(d_k * n_head_kv * n_kv));
  std::vector<float> vf(static_cast<size_t>(d_v * n_head_kv * n_kv));
  for (int64_t j = 0; j < n_kv; ++j) {
    for (int64_t h = 0; h < n_head_kv; ++h) {
      read_row(k.type, k.row(h, j), &kf[static_cast<size_t>((j * n_head_kv + h) * d_k)], d_k);
      read_row(v.type, v.row(h, j), &vf[static_cast<size_t>((j * n_head_kv + h) * d_v)], d_v);
    }
  }

  std::vector<float> scores(static_cast<size_t>(n_kv));
  std::vector<float> acc(static_cast<size_t>(d_v));
  for (int64_t t = 0; t < n_tokens; ++t) {
    PADDOCK_CHECK(pos[t] >= 0 && (!p.cells.empty() || pos[t] < n_kv));
    std::vector<int64_t> seen;  // the cells token t sees
    for (int64_t j = 0; j < n_kv; ++j) {
      if (attn_visible(p, pos[t], cell_pos[static_cast<size_t>(j)])) seen.push_back(j);
    }
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t hk = h / group;
      const float* qrow = reinterpret_cast<const float*>(q.row(h, t));
      float max = sinks != nullptr ? sinks[h] : -INFINITY;
      for (int64_t j : seen) {
        float s = dot_f32(qrow, &kf[static_cast<size_t>((j * n_head_kv + hk) * d_k)], d_k) * p.scale;
        if (p.softcap > 0) s = p.softcap * std::tanh(s / p.softcap);
        scores[j] = s;
        max = std::max(max, s);
      }
      double sum = sinks != nullptr ? std::exp(static_cast<double>(sinks[h]) - max) : 0.0;
      for (int64_t j : seen) {
        scores[j] = std::exp(scores[j] - max);
        sum += scores[j];
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t j : seen) {
        const float* vrow = &vf[static_cast<size_t>((j * n_head_kv + hk) * d_v)];
        for (int64_t i = 0; i < d_v; ++i) acc[i] += scores[j] * vrow[i];
      }
      const float inv = sum > 0 ? static_cast<float>(1.0 / sum) : 0.0f;  // seeing nothing gives 0
      for (int64_t i = 0; i < d_v; ++i) dst.f32(i, h, t) = acc[i] * inv;
    }
  }
}

}  // namespace paddock::ref
