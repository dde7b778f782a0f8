// Causal attention with grouped KV heads and online softmax (one pass over the visible cells,
// rescaling the running sum and output when the maximum grows), so no score vector is
// stored. Work is split over (token, kv head) pairs: the query heads that share a kv head
// are processed together, so each K/V row is read and converted from F16 (or dequantized
// from Q8_0 / Q4_0 with the quant table's functions) once per group.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/dot.h"
#include "backend/cpu/ops.h"
#include "base/check.h"
#include "quant/quant.h"

namespace paddock::cpu {

namespace {

float dot(const float* a, const float* b, int64_t n) {
  constexpr int kLanes = 8;
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  float sum = 0;
  for (float v : acc) sum += v;
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

void attention(ThreadPool& pool, CpuIsa isa, const TensorView& q, const TensorView& k, const TensorView& v,
               std::span<const int32_t> pos, float scale, const TensorView& dst) {
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
  for (int32_t p : pos) PADDOCK_CHECK(p >= 0 && p < n_kv);
  const int64_t group = n_head / n_head_kv;
  const bool f16 = k.type == DType::kF16;
  const HalfToFloatFn to_float = half_to_float_kernel(isa);
  const QuantOps* quant = k.type == DType::kF32 || f16 ? nullptr : quant_ops(k.type);

  pool.parallel_for(n_tokens * n_head_kv, [&](int64_t begin, int64_t end, int) {
    std::vector<float> kbuf(static_cast<size_t>(d_k));
    std::vector<float> vbuf(static_cast<size_t>(d_v));
    std::vector<float> acc(static_cast<size_t>(group * d_v));
    std::vector<float> max(static_cast<size_t>(group));
    std::vector<float> sum(static_cast<size_t>(group));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t hk = r % n_head_kv;
      const int64_t t = r / n_head_kv;
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(max.begin(), max.end(), -INFINITY);
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t j = 0; j <= pos[t]; ++j) {
        const float* krow = reinterpret_cast<const float*>(k.row(hk, j));
        const float* vrow = reinterpret_cast<const float*>(v.row(hk, j));
        if (f16) {
          to_float(reinterpret_cast<const uint16_t*>(k.row(hk, j)), kbuf.data(), d_k);
          to_float(reinterpret_cast<const uint16_t*>(v.row(hk, j)), vbuf.data(), d_v);
          krow = kbuf.data();
          vrow = vbuf.data();
        } else if (quant != nullptr) {
          quant->dequantize_row(k.row(hk, j), kbuf.data(), d_k);
          quant->dequantize_row(v.row(hk, j), vbuf.data(), d_v);
          krow = kbuf.data();
          vrow = vbuf.data();
        }
        for (int64_t g = 0; g < group; ++g) {
          const int64_t h = hk * group + g;
          const float s = dot(reinterpret_cast<const float*>(q.row(h, t)), krow, d_k) * scale;
          float* out = &acc[static_cast<size_t>(g * d_v)];
          float p = 1.0f;
          if (s > max[g]) {
            // The new maximum rescales what was accumulated so far (exp(-inf) = 0 at start).
            const float c = std::exp(max[g] - s);
            for (int64_t i = 0; i < d_v; ++i) out[i] *= c;
            sum[g] *= c;
            max[g] = s;
          } else {
            p = std::exp(s - max[g]);
          }
          for (int64_t i = 0; i < d_v; ++i) out[i] += p * vrow[i];
          sum[g] += p;
        }
      }
      for (int64_t g = 0; g < group; ++g) {
        const float inv = 1.0f / sum[g];
        const float* out = &acc[static_cast<size_t>(g * d_v)];
        for (int64_t i = 0; i < d_v; ++i) dst.f32(i, hk * group + g, t) = out[i] * inv;
      }
    }
  });
}

}  // namespace paddock::cpu
