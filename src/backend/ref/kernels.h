// The reference kernels behind RefBackend, one free function per op (see backend.h for the
// contracts). Kept apart from the class so tests and future backends can call them directly.
//   ref::rms_norm(x, 1e-5f, out);
#pragma once

#include <cstdint>
#include <span>

#include "backend/backend.h"

namespace paddock::ref {

// True when rows of `t` can be read as F32 (the quant table has a dequantizer).
bool can_read_rows(DType t);
// Row of n elements of type t -> F32.
void read_row(DType t, const void* src, float* dst, int64_t n);
// Sum of a[i] * b[i] in F32 lanes, the lanes added in double.
float dot_f32(const float* a, const float* b, int64_t n);

void get_rows(const TensorView& table, std::span<const int32_t> ids, const TensorView& dst);
void mul_mat(const TensorView& w, const TensorView& x, const TensorView& dst);
void rms_norm(const TensorView& x, float eps, const TensorView& dst);
void mul(const TensorView& a, const TensorView& b, const TensorView& dst);
void add(const TensorView& a, const TensorView& b, const TensorView& dst);
void rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p, const TensorView& dst);
void swiglu(const TensorView& gate, const TensorView& up, const TensorView& dst);
void geglu(const TensorView& gate, const TensorView& up, const TensorView& dst);
void scale(const TensorView& x, float s, const TensorView& dst);
void norm(const TensorView& x, float eps, const TensorView& dst);
void gelu(const TensorView& x, const TensorView& dst);
// sinks: n_head floats, or nullptr.
void attention(const TensorView& q, const TensorView& k, const TensorView& v, std::span<const int32_t> pos,
               const AttnParams& p, const float* sinks, const TensorView& dst);
void copy(const TensorView& src, const TensorView& dst);
void moe_gate(const TensorView& logits, const MoeParams& p, const TensorView& dst);
void mul_mat_id(const TensorView& w, const TensorView& x, const TensorView& gate, const TensorView& dst);
void moe_sum(const TensorView& experts_out, const TensorView& gate, const TensorView& dst);
void add_id(const TensorView& x, const TensorView& bias, const TensorView& gate, const TensorView& dst);
void swiglu_oai(const TensorView& gate, const TensorView& up, float alpha, float limit, const TensorView& dst);

}  // namespace paddock::ref
