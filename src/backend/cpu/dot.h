// The CPU backend's dot-product kernels: one entry per weight type and ISA. A kernel dots one
// weight row x (n elements of the weight type) with ny activation rows (ny in 1..kMaxCols) of
// the type's vec_dot_type (quant/quant.h), laid out y_stride bytes apart, so one load and
// unpack of each weight block serves several columns (prompt processing); ny == 1 is decode.
// Invariants: n is a multiple of the weight type's block size; out has ny floats. Every
// entry computes what quant_ops(t)->vec_dot computes, up to float summation order (Q8_0 and
// MXFP4: bit for bit, quant/lanes8.h).
//   const DotFn f = dot_kernel(CpuIsa::kAvx2, DType::kQ4_K);
//   f(n, weight_row, act, act_row_bytes, 4, out4);
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/isa.h"
#include "tensor/dtype.h"

namespace paddock::cpu {

// Prompt processing unpacks each weight block once per kMaxCols columns (8 measured no faster
// on AVX2: the per-column accumulators then spill).
inline constexpr int kMaxCols = 4;

using DotFn = void (*)(int64_t n, const void* x, const void* y, size_t y_stride, int ny, float* out);

// nullptr when the type has no vec_dot in the quant table. Paths fall back to the next
// narrower one for types they have no kernel of their own for.
DotFn dot_kernel(CpuIsa isa, DType t);

// F16 row <-> F32 row, exactly as fp16_to_f32 / f32_to_fp16 (base/fp16.h) convert each
// element, NaNs included (copy: a decode step's K/V rows into an F16 cache).
using HalfToFloatFn = void (*)(const uint16_t* src, float* dst, int64_t n);
using FloatToHalfFn = void (*)(const float* src, uint16_t* dst, int64_t n);
HalfToFloatFn half_to_float_kernel(CpuIsa isa);
FloatToHalfFn float_to_half_kernel(CpuIsa isa);
HalfToFloatFn half_to_float_avx2();  // nullptr on non-x86 builds
FloatToHalfFn float_to_half_avx2();  // nullptr on non-x86 builds

// Per-ISA tables (entries nullptr where the ISA has no kernel of its own); dot_kernel
// composes them. The avx2 table is empty when built for a non-x86 target.
DotFn dot_kernel_scalar(DType t);
DotFn dot_kernel_avx2(DType t);

}  // namespace paddock::cpu
