// The mixture-of-experts ops. mul_mat_id groups a pass's (token, slot) pairs by expert and
// multiplies each chosen expert's matrix once by all of its columns (mul_mat_grouped: the
// experts' products share one pass over the pool), so a prefill streams each chosen expert's
// weights once, and a decoded token reads only its k experts.
#include <cstring>

#include "backend/cpu/ops.h"
#include "backend/moe.h"
#include "base/check.h"

namespace paddock::cpu {

void moe_gate(ThreadPool& pool, const TensorView& logits, const MoeParams& p, const TensorView& dst) {
  PADDOCK_CHECK(logits.nb[0] == sizeof(float) && dst.nb[0] == sizeof(float) && dst.ne[0] == logits.ne[0]);
  pool.parallel_for(logits.ne[1], [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      moe_gate_column(reinterpret_cast<const float*>(logits.row(t)), logits.ne[0], p,
                      reinterpret_cast<float*>(dst.row(t)));
    }
  });
}

void mul_mat_id(ThreadPool& pool, CpuIsa isa, Scratch& scratch, const TensorView& w, const PackedFn& packed,
                const TensorView& x, const TensorView& gate, const TensorView& dst) {
  const int64_t k = w.ne[0];
  const int64_t m = w.ne[1];
  const int64_t n_expert = w.ne[2];
  const auto slots = static_cast<int32_t>(dst.ne[1]);
  const int64_t n_tokens = dst.ne[2];
  PADDOCK_CHECK(x.nb[0] == sizeof(float) && gate.nb[0] == sizeof(float) && dst.ne[0] == m &&
                gate.ne[0] == n_expert);

  // Each token's experts, then the (token, slot) columns of each expert, in expert order.
  std::vector<int32_t>& chosen = scratch.moe_experts;
  chosen.assign(static_cast<size_t>(n_tokens * slots), -1);
  std::vector<int64_t> count(static_cast<size_t>(n_expert) + 1, 0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    int32_t* e = &chosen[static_cast<size_t>(t * slots)];
    const int n = moe_slots(reinterpret_cast<const float*>(gate.row(t)), n_expert, slots, e);
    for (int s = 0; s < n; ++s) ++count[static_cast<size_t>(e[s]) + 1];
    for (int32_t s = n; s < slots; ++s) {
      for (int64_t r = 0; r < m; ++r) *reinterpret_cast<float*>(dst.row(s, t) + r * dst.nb[0]) = 0.0f;
    }
  }
  for (int64_t e = 0; e < n_expert; ++e) count[static_cast<size_t>(e) + 1] += count[static_cast<size_t>(e)];
  std::vector<int64_t> columns(static_cast<size_t>(count.back()));  // t * slots + s, grouped by expert
  std::vector<int64_t> next(count.begin(), count.end() - 1);
  for (int64_t c = 0; c < n_tokens * slots; ++c) {
    const int32_t e = chosen[static_cast<size_t>(c)];
    if (e >= 0) columns[static_cast<size_t>(next[static_cast<size_t>(e)]++)] = c;
  }

  // Every chosen column gathered, grouped by expert; one product per expert, all in one pass.
  const int64_t total = count.back();
  scratch.moe_in.resize(static_cast<size_t>(k * total));
  scratch.moe_out.resize(static_cast<size_t>(m * total));
  for (int64_t j = 0; j < total; ++j) {
    const int64_t c = columns[static_cast<size_t>(j)];
    const int64_t s = x.ne[1] == 1 ? 0 : c % slots;
    std::memcpy(&scratch.moe_in[static_cast<size_t>(j * k)], x.row(s, c / slots),
                sizeof(float) * static_cast<size_t>(k));
  }
  std::vector<MatGroup> groups;
  for (int64_t e = 0; e < n_expert; ++e) {
    const int64_t first = count[static_cast<size_t>(e)];
    const int64_t n = count[static_cast<size_t>(e) + 1] - first;
    if (n == 0) continue;
    const TensorView we = expert_matrix(w, e);
    groups.push_back({we, packed(we), first, n});
  }
  const TensorView in = TensorView::contiguous(scratch.moe_in.data(), DType::kF32, {k, total});
  const TensorView out = TensorView::contiguous(scratch.moe_out.data(), DType::kF32, {m, total});
  mul_mat_grouped(pool, isa, scratch, groups, in, out);
  for (int64_t j = 0; j < total; ++j) {
    const int64_t c = columns[static_cast<size_t>(j)];
    uint8_t* col = dst.row(c % slots, c / slots);
    const float* v = &scratch.moe_out[static_cast<size_t>(j * m)];
    if (dst.nb[0] == sizeof(float)) {
      std::memcpy(col, v, sizeof(float) * static_cast<size_t>(m));
    } else {
      for (int64_t r = 0; r < m; ++r) *reinterpret_cast<float*>(col + r * dst.nb[0]) = v[r];
    }
  }
}

void moe_sum(ThreadPool& pool, const TensorView& experts_out, const TensorView& gate, const TensorView& dst) {
  const auto slots = static_cast<int32_t>(experts_out.ne[1]);
  PADDOCK_CHECK(slots <= kMaxExpertsPerToken && gate.nb[0] == sizeof(float));
  pool.parallel_for(dst.ne[1], [&](int64_t b, int64_t e, int) {
    int32_t experts[kMaxExpertsPerToken];
    for (int64_t t = b; t < e; ++t) {
      const auto* g = reinterpret_cast<const float*>(gate.row(t));
      const int n = moe_slots(g, gate.ne[0], slots, experts);
      for (int64_t r = 0; r < dst.ne[0]; ++r) {
        float acc = 0.0f;
        for (int s = 0; s < n; ++s) acc += experts_out.f32(r, s, t) * g[experts[s]];
        dst.f32(r, t) = acc;
      }
    }
  });
}

void add_id(ThreadPool& pool, const TensorView& x, const TensorView& bias, const TensorView& gate,
            const TensorView& dst) {
  const auto slots = static_cast<int32_t>(x.ne[1]);
  PADDOCK_CHECK(slots <= kMaxExpertsPerToken && gate.nb[0] == sizeof(float));
  pool.parallel_for(x.ne[2], [&](int64_t b, int64_t e, int) {
    int32_t experts[kMaxExpertsPerToken];
    for (int64_t t = b; t < e; ++t) {
      const int n = moe_slots(reinterpret_cast<const float*>(gate.row(t)), gate.ne[0], slots, experts);
      for (int32_t s = 0; s < slots; ++s) {
        for (int64_t r = 0; r < x.ne[0]; ++r) {
          dst.f32(r, s, t) = s < n ? x.f32(r, s, t) + bias.f32(r, experts[s]) : x.f32(r, s, t);
        }
      }
    }
  });
}

}  // namespace paddock::cpu
