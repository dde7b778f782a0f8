// Attention with grouped KV heads over a KV cache in F16, F32, Q8_0 or Q4_0: for every query
// token and head, scores against the visible cells (attn_visible: causal, windowed or all,
// over cells that hold positions in order or tagged ones; softcapped when asked), a softmax
// (whose denominator a sink may add to), and the weighted sum of V (0 if nothing is seen).
// Quantized K/V rows are dequantized with the quant table's reference functions.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/ref/kernels.h"
#include "base/check.h"

namespace paddock::ref {

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

  // K and V rows as F32, converted once per call rather than once per query.
  std::vector<float> kf(static_cast<size_t>(d_k * n_head_kv * n_kv));
  std::vector<float> vf(static_cast<size_t>(d_v * n_head_kv * n_kv));
  for (int64_t j = 0; j < n_kv; ++j) {
    for (int64_t h = 0; h < n_head_kv; ++h) {
      read_row(k.type, k.row(h, j), &kf[static_cast<size_t>((j * n_head_kv + h) * d_k)], d_k);
      read_row(v.type, v.row(h, j), &vf[static_cast<size_t>((j * n_head_kv + h) * d_v)], d_v);
    }
  }

  PADDOCK_CHECK(p.cells.empty() || static_cast<int64_t>(p.cells.size()) == n_kv);
  std::vector<int32_t> cell_pos(p.cells.begin(), p.cells.end());
  if (p.cells.empty()) {
    for (int64_t j = 0; j < n_kv; ++j) cell_pos.push_back(static_cast<int32_t>(j));
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
