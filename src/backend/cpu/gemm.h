// Kernels over interleaved weights (repack.h): one call multiplies a group of kRepackRows rows
// (k elements each) by ny activation columns (1..kMaxCols) of the type's vec_dot_type, laid
// out y_stride bytes apart, and writes out[8 * j + r] = row r . column j. Decode is ny == 1;
// prompt processing reuses each unpacked weight register for ny columns.
// Invariant: results equal quant_ops(t)->vec_dot on the original rows up to float summation
// order (the integer parts are exact); Q8_0 and MXFP4 bit for bit (quant/lanes8.h).
//   const GemmFn f = gemm_kernel(CpuIsa::kAvx2, DType::kQ4_K);
//   if (f) f(k, packed_group, act, act_row_bytes, 4, out32);
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/isa.h"
#include "tensor/dtype.h"

namespace paddock::cpu {

using GemmFn = void (*)(int64_t k, const void* w, const void* y, size_t y_stride, int ny, float* out);

// nullptr when the path has no interleaved kernel for t (the scalar path never has one).
GemmFn gemm_kernel(CpuIsa isa, DType t);
GemmFn gemm_kernel_avx2(DType t);    // maddubs; nullptr off x86
GemmFn gemm_kernel_avx512(DType t);  // vpdpbusd (AVX-512 VNNI); nullptr off x86
GemmFn gemm_lanes_avx512(DType t);   // its Q8_0 and MXFP4 kernels on 512-bit registers

// Whether gemm_kernel(isa, t) takes its activations through offset_activations first: the
// AVX-512 Q8_0, Q4_0, Q5_0 and MXFP4 kernels do, as vpdpbusd multiplies unsigned by signed bytes and the
// weights stay signed.
bool gemm_offsets_activations(CpuIsa isa, DType t);
// A row of n Q8_0 activations with every quant x stored as the unsigned byte x + 128 (x ^ 0x80).
void offset_activations(uint8_t* q8_0_row, int64_t n);

}  // namespace paddock::cpu
