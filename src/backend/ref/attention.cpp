// Attention with grouped KV heads over a KV cache in F16, F32, Q8_0 or Q4_0: for every query
// token and head, scores against the visible cells (attn_visible: causal, windowed or all,
// over cells that hold positions in order or tagged ones; softcapped when asked), a softmax
// (whose denominator a sink may add to), and the weighted sum of V (0 if nothing is seen).
// Quantized K/V rows are dequantized with the quant table's reference functions.
// Over an F16 cache, short passes (f16_rows_apply: under 64 tokens and 512 cells) round as
// llama.cpp's flash attention (the reference the golden files come from) does: Q to F16, an
// online softmax cell by cell and the weighted sum of V kept in F16 (f16_attention_row.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/f16_attention_row.h"
#include "backend/ref/kernels.h"
#include "base/check.h"
#include "base/fp16.h"

namespace paddock::ref {

namespace {

// Short passes over an F16 cache (f16_rows_apply), with llama.cpp's flash-attention roundings
// (backend/f16_attention_row.h).
void attention_f16_online(const TensorView& q, const TensorView& k, const TensorView& v,
                          const std::vector<int32_t>& cell_pos, std::span<const int32_t> pos, const AttnParams& p,
                          const float* sinks, const TensorView& dst) {
  PADDOCK_CHECK(dst.nb[0] == sizeof(float));
  F16RowScratch scratch;
  for (int64_t t = 0; t < q.ne[2]; ++t) {
    for (int64_t h = 0; h < q.ne[1]; ++h) {
      const int64_t hk = h / (q.ne[1] / k.ne[1]);
      const float* q_row = reinterpret_cast<const float*>(q.row(h, t));
      float* out = reinterpret_cast<float*>(dst.row(h, t));
      f16_attention_rows(
          f16_ops_scalar(), &q_row, 1, q.ne[0], v.ne[0], 0, k.ne[2],
          [&](int64_t j) { return attn_visible(p, pos[t], cell_pos[static_cast<size_t>(j)]); },
          [&](int64_t j) { return reinterpret_cast<const uint16_t*>(k.row(hk, j)); },
          [&](int64_t j) { return reinterpret_cast<const uint16_t*>(v.row(hk, j)); }, p.scale, p.softcap,
          sinks != nullptr ? sinks + h : nullptr, scratch, &out);
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
  int64_t kv_end = p.causal && p.cells.empty() ? 0 : n_kv;  // the cells any row may see
  for (int64_t t = 0; t < n_tokens; ++t) {
    PADDOCK_CHECK(pos[t] >= 0 && (!p.cells.empty() || pos[t] < n_kv));
    if (p.causal && p.cells.empty()) kv_end = std::max<int64_t>(kv_end, pos[t] + 1);
  }
  if (f16_rows_apply(k.type == DType::kF16, n_tokens, kv_end)) {
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
