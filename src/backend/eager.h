// One op at a time: each call records a one-node graph over the given views and runs it at
// once. For kernel tests and kernel benchmarks, which compare backends op by op; models
// record whole passes instead (graph.h). Failures (an op the backend lacks) abort: callers
// check supports() first.
//   eager::mul_mat(*be, w, x, dst);  // w [K, M], x [K, N] F32 -> dst [M, N] F32
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "backend/backend.h"

namespace paddock::eager {

void get_rows(Backend& be, const TensorView& table, std::span<const int32_t> ids, const TensorView& dst);
void mul_mat(Backend& be, const TensorView& w, const TensorView& x, const TensorView& dst);
void rms_norm(Backend& be, const TensorView& x, float eps, const TensorView& dst);
void mul(Backend& be, const TensorView& a, const TensorView& b, const TensorView& dst);
void add(Backend& be, const TensorView& a, const TensorView& b, const TensorView& dst);
// p.freq_factors, when set, travel as the node's second input.
void rope(Backend& be, const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
          const TensorView& dst);
void swiglu(Backend& be, const TensorView& gate, const TensorView& up, const TensorView& dst);
void attention(Backend& be, const TensorView& q, const TensorView& k, const TensorView& v,
               std::span<const int32_t> pos, float scale, const TensorView& dst);
// With every option: mask kind, window, softcap, and per-head sinks.
void attention(Backend& be, const TensorView& q, const TensorView& k, const TensorView& v,
               std::span<const int32_t> pos, const AttnParams& p, const std::optional<TensorView>& sinks,
               const TensorView& dst);
void copy(Backend& be, const TensorView& src, const TensorView& dst);

}  // namespace paddock::eager
