// The mixture-of-experts ops, one token and one slot at a time.
#include <optional>
#include <vector>

#include "backend/moe.h"
#include "backend/ref/kernels.h"
#include "base/check.h"

namespace paddock::ref {

void moe_gate(const TensorView& logits, const MoeParams& p, const TensorView& dst) {
  PADDOCK_CHECK(logits.nb[0] == sizeof(float) && dst.nb[0] == sizeof(float) && dst.ne[0] == logits.ne[0]);
  for (int64_t t = 0; t < logits.ne[1]; ++t) {
    moe_gate_column(reinterpret_cast<const float*>(logits.row(t)), logits.ne[0], p,
                    reinterpret_cast<float*>(dst.row(t)));
  }
}

void mul_mat_id(const TensorView& w, const TensorView& x, const TensorView& gate, const TensorView& dst) {
  const int64_t k = w.ne[0];
  const int64_t m = w.ne[1];
  const auto slots = static_cast<int32_t>(dst.ne[1]);
  PADDOCK_CHECK(x.nb[0] == sizeof(float) && gate.nb[0] == sizeof(float) && dst.ne[0] == m);
  const bool quantized = quantized_activations(w.type);
  std::optional<QuantizedColumns> act;
  if (quantized) act.emplace(w.type, x);
  std::vector<float> row(static_cast<size_t>(k));
  std::vector<int32_t> experts(static_cast<size_t>(slots));
  for (int64_t t = 0; t < dst.ne[2]; ++t) {
    const int n = moe_slots(reinterpret_cast<const float*>(gate.row(t)), gate.ne[0], slots, experts.data());
    for (int32_t s = 0; s < slots; ++s) {
      const int64_t c = (x.ne[1] == 1 ? 0 : s) + x.ne[1] * t;
      const float* col = reinterpret_cast<const float*>(x.row(x.ne[1] == 1 ? 0 : s, t));
      for (int64_t r = 0; r < m; ++r) {
        if (s >= n) {
          dst.f32(r, s, t) = 0.0f;
          continue;
        }
        const void* w_row = w.row(r, experts[static_cast<size_t>(s)]);
        if (quantized) {
          dst.f32(r, s, t) = act->dot(w_row, c, k);
        } else {
          read_row(w.type, w_row, row.data(), k);
          dst.f32(r, s, t) = dot_f32(row.data(), col, k);
        }
      }
    }
  }
}

void moe_sum(const TensorView& experts_out, const TensorView& gate, const TensorView& dst) {
  const auto slots = static_cast<int32_t>(experts_out.ne[1]);
  std::vector<int32_t> experts(static_cast<size_t>(slots));
  for (int64_t t = 0; t < dst.ne[1]; ++t) {
    const auto* g = reinterpret_cast<const float*>(gate.row(t));
    const int n = moe_slots(g, gate.ne[0], slots, experts.data());
    for (int64_t r = 0; r < dst.ne[0]; ++r) {
      float acc = 0.0f;
      for (int s = 0; s < n; ++s) acc += experts_out.f32(r, s, t) * g[experts[static_cast<size_t>(s)]];
      dst.f32(r, t) = acc;
    }
  }
}

void add_id(const TensorView& x, const TensorView& bias, const TensorView& gate, const TensorView& dst) {
  const auto slots = static_cast<int32_t>(x.ne[1]);
  std::vector<int32_t> experts(static_cast<size_t>(slots));
  for (int64_t t = 0; t < x.ne[2]; ++t) {
    const int n = moe_slots(reinterpret_cast<const float*>(gate.row(t)), gate.ne[0], slots, experts.data());
    for (int32_t s = 0; s < slots; ++s) {
      for (int64_t r = 0; r < x.ne[0]; ++r) {
        dst.f32(r, s, t) = s < n ? x.f32(r, s, t) + bias.f32(r, experts[static_cast<size_t>(s)]) : x.f32(r, s, t);
      }
    }
  }
}

}  // namespace paddock::ref
