// Activation quantizers of the CPU backend: mul_mat turns each F32 activation column into the
// weight type's vec_dot_type once per call, as llama.cpp's CPU backend does (quant.h's
// from_float); every path gives from_float's bytes, so results do not depend on the ISA.
// Invariant: n is a multiple of the type's block size.
//   const ActQuantFn q = act_quantizer(CpuIsa::kAvx2, DType::kQ8_K);
//   q(x, dst, 2048);
#pragma once

#include <cstdint>

#include "backend/cpu/isa.h"
#include "tensor/dtype.h"

namespace paddock::cpu {

using ActQuantFn = void (*)(const float* src, void* dst, int64_t n);

// nullptr when `t` has no quantize_row in the quant table.
ActQuantFn act_quantizer(CpuIsa isa, DType t);
// The AVX2 table alone (nullptr for types without an AVX2 quantizer, or off x86).
ActQuantFn act_quantizer_avx2(DType t);

}  // namespace paddock::cpu
