// The reference kernels behind RefBackend, one free function per op (see backend.h for the
// contracts). Kept apart from the class so tests and future backends can call them directly.
//   ref::rms_norm(x, 1e-5f, out);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "quant/quant.h"

namespace paddock::ref {

// True when rows of `t` can be read as F32 (the quant table has a dequantizer).
bool can_read_rows(DType t);
// Row of n elements of type t -> F32.
void read_row(DType t, const void* src, float* dst, int64_t n);
// Sum of a[i] * b[i] in F32 lanes, the lanes added in double.
float dot_f32(const float* a, const float* b, int64_t n);
// Whether weights of type t are multiplied as llama.cpp's CPU backend does it, with quantized
// activations: t is a block type with a vec_dot, so each activation column is quantized once
// to t's vec_dot_type (from_float) and every output is the quant table's vec_dot. Float
// weights (F32, F16, BF16) meet F32 activations.
bool quantized_activations(DType t);

// x's activation columns (every i1, i2, i3 in order: column i1 + ne1 * (i2 + ne2 * i3))
// quantized for weights of type w_type (quantized_activations), and their dots with rows.
class QuantizedColumns {
 public:
  QuantizedColumns(DType w_type, const TensorView& x);
  int64_t cols() const { return cols_; }
  // vec_dot of a w_type row of k elements with column c.
  float dot(const void* w_row, int64_t c, int64_t k) const;

 private:
  uint8_t* column(int64_t c) { return data_.data() + static_cast<size_t>(c) * row_bytes_; }
  const uint8_t* column(int64_t c) const { return data_.data() + static_cast<size_t>(c) * row_bytes_; }

  const QuantOps& ops_;
  size_t row_bytes_ = 0;
  int64_t cols_ = 0;
  std::vector<uint8_t> data_;
};

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
void tanh(const TensorView& x, const TensorView& dst);
// sinks: n_head floats, or nullptr.
void attention(const TensorView& q, const TensorView& k, const TensorView& v, std::span<const int32_t> pos,
               const AttnParams& p, const float* sinks, const TensorView& dst);
void copy(const TensorView& src, const TensorView& dst);
void moe_gate(const TensorView& logits, const MoeParams& p, const TensorView& dst);
void mul_mat_id(const TensorView& w, const TensorView& x, const TensorView& gate, const TensorView& dst);
void moe_sum(const TensorView& experts_out, const TensorView& gate, const TensorView& dst);
void add_id(const TensorView& x, const TensorView& bias, const TensorView& gate, const TensorView& dst);
void swiglu_oai(const TensorView& gate, const TensorView& up, float alpha, float limit,
                const TensorView& dst);

}  // namespace paddock::ref
