// The quant table: for each GGUF type paddock computes with, its scalar reference kernels
// (quant/kernels.h) and the type activations are quantized to for dot products, exactly as
// llama.cpp's CPU backend pairs them (Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4 -> Q8_0, Q4_1/Q5_1 -> Q8_1,
// K-quants and IQ4_XS -> Q8_K, floats -> themselves).
// Invariants: row lengths are multiples of the block size (dtype_info(t).block_size); quantizer
// inputs are finite. The table is one explicit row per GGUF id, checked at compile time.
//   const QuantOps* q = quant_ops(DType::kQ4_K);
//   std::vector<uint8_t> act = quantize(q->vec_dot_type, activations);
//   q->vec_dot(n, &out, weight_row, act.data());
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tensor/dtype.h"

namespace paddock {

struct QuantOps {
  DType type;
  void (*dequantize_row)(const void* src, float* dst, int64_t n);  // n % block_size == 0
  void (*quantize_row)(const float* src, void* dst, int64_t n);    // nullptr if no quantizer
  DType vec_dot_type;                                              // what activations become
  void (*vec_dot)(int64_t n, float* out, const void* x,
                  const void* y);  // x: this type, y: vec_dot_type; nullptr if none
};

// nullptr when paddock cannot compute with t. Q8_1 and Q8_K have rows (they are the activation
// types other rows name) but no vec_dot: they are not weight types.
const QuantOps* quant_ops(DType t);

// Whole-row conveniences over the table; t must have the kernel used (PADDOCK_CHECK) and
// src.size() must be a multiple of t's block size.
std::vector<uint8_t> quantize(DType t, std::span<const float> src);
std::vector<float> dequantize(DType t, std::span<const uint8_t> src, int64_t n);

// The quantizer llama.cpp's CPU backend applies to activations (a row of vec_dot_type) and to
// a quantized KV cache: its x86 build's from_float. For Q8_0 and Q8_1 that is not the
// reference quantizer: the scale is 127 / amax (not 1 / (amax / 127)) and x * scale rounds
// half to even (not away from zero), so now and then a value lands one step apart, which
// moves a product by ~1e-3 of its size. Other types: the reference quantizer (nullptr if none).
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n);
QuantizeRowFn from_float(DType t);

// The dot product of a row x of type t with f32 activations y, as llama.cpp computes it:
// y is quantized to t's vec_dot_type first (from_float).
float quantized_dot(DType t, const void* x, std::span<const float> y);

}  // namespace paddock
