// Activation quantizers of the CPU backend: mul_mat turns each F32 activation column into the
// weight type's vec_dot_type once per call. The AVX2 versions of Q8_K and Q8_0 produce the
// same bytes as the reference quantizers (quant/kernels.h) — same scale, same rounding — so
// results do not depend on the ISA path; other types use the reference quantizer.
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
