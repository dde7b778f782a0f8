// The scalar reference kernels of every type, one set per type, as the quant table
// (quant/quant.h) holds them. Plain C-style loops that reproduce ggml's reference and generic
// code (ggml-quants.c, ggml-cpu/quants.c) step by step: this is the oracle that optimised
// kernels are tested against, so nobody optimises it. The Q8_0 and MXFP4 dots follow ggml's AVX2
// kernels' float order instead (quant/lanes8.h), which every path then matches bit for bit.
// Invariants: n is a multiple of the type's block size; buffers hold whole rows; inputs to
// quantizers are finite. vec_dot's y is a row of the type's vec_dot_type (see quant.h).
//   dequantize_row_q4_0(row_bytes, out_floats, n);
#pragma once

#include <cstdint>

namespace paddock {

// Float types. vec_dot accumulates in double, as ggml's ggml_vec_dot_f32/f16/bf16 do.
void dequantize_row_f32(const void* src, float* dst, int64_t n);
void quantize_row_f32(const float* src, void* dst, int64_t n);
void vec_dot_f32(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_f16(const void* src, float* dst, int64_t n);
void quantize_row_f16(const float* src, void* dst, int64_t n);
void vec_dot_f16(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_bf16(const void* src, float* dst, int64_t n);
void quantize_row_bf16(const float* src, void* dst, int64_t n);
void vec_dot_bf16(int64_t n, float* out, const void* x, const void* y);

// 32-element block types.
void dequantize_row_q4_0(const void* src, float* dst, int64_t n);
void quantize_row_q4_0(const float* src, void* dst, int64_t n);
void vec_dot_q4_0_q8_0(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q4_1(const void* src, float* dst, int64_t n);
void quantize_row_q4_1(const float* src, void* dst, int64_t n);
void vec_dot_q4_1_q8_1(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q5_0(const void* src, float* dst, int64_t n);
void quantize_row_q5_0(const float* src, void* dst, int64_t n);
void vec_dot_q5_0_q8_0(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q5_1(const void* src, float* dst, int64_t n);
void quantize_row_q5_1(const float* src, void* dst, int64_t n);
void vec_dot_q5_1_q8_1(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q8_0(const void* src, float* dst, int64_t n);
void quantize_row_q8_0(const float* src, void* dst, int64_t n);
void vec_dot_q8_0_q8_0(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q8_1(const void* src, float* dst, int64_t n);
void quantize_row_q8_1(const float* src, void* dst, int64_t n);
// ggml-cpu's x86 quantize_row_q8_0 / q8_1 (from_float in quant.h says how they differ).
void quantize_row_q8_0_x86(const float* src, void* dst, int64_t n);
void quantize_row_q8_1_x86(const float* src, void* dst, int64_t n);

// K-quants (256-element super-blocks). The quantizers are ggml's quantize_row_*_ref, which is
// what llama-quantize writes when no importance matrix is given.
void dequantize_row_q2_K(const void* src, float* dst, int64_t n);
void quantize_row_q2_K(const float* src, void* dst, int64_t n);
void vec_dot_q2_K_q8_K(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q3_K(const void* src, float* dst, int64_t n);
void quantize_row_q3_K(const float* src, void* dst, int64_t n);
void vec_dot_q3_K_q8_K(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q4_K(const void* src, float* dst, int64_t n);
void quantize_row_q4_K(const float* src, void* dst, int64_t n);
void vec_dot_q4_K_q8_K(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q5_K(const void* src, float* dst, int64_t n);
void quantize_row_q5_K(const float* src, void* dst, int64_t n);
void vec_dot_q5_K_q8_K(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q6_K(const void* src, float* dst, int64_t n);
void quantize_row_q6_K(const float* src, void* dst, int64_t n);
void vec_dot_q6_K_q8_K(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_q8_K(const void* src, float* dst, int64_t n);
void quantize_row_q8_K(const float* src, void* dst, int64_t n);

// Non-linear 4-bit types. The quantizers are what llama-quantize writes without an importance
// matrix (ggml's quantize_iq4_nl / quantize_iq4_xs with 7 scale trials).
void dequantize_row_iq4_nl(const void* src, float* dst, int64_t n);
void quantize_row_iq4_nl(const float* src, void* dst, int64_t n);
void vec_dot_iq4_nl_q8_0(int64_t n, float* out, const void* x, const void* y);
void dequantize_row_iq4_xs(const void* src, float* dst, int64_t n);
void quantize_row_iq4_xs(const float* src, void* dst, int64_t n);
void vec_dot_iq4_xs_q8_K(int64_t n, float* out, const void* x, const void* y);

// MXFP4: the quantizer is ggml's quantize_row_mxfp4_ref (what llama-quantize writes).
void dequantize_row_mxfp4(const void* src, float* dst, int64_t n);
void quantize_row_mxfp4(const float* src, void* dst, int64_t n);
void vec_dot_mxfp4_q8_0(int64_t n, float* out, const void* x, const void* y);

}  // namespace paddock
