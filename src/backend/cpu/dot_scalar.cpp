// The scalar path: the quant table's reference vec_dot, once per column.
#include "backend/cpu/dot.h"
#include "base/fp16.h"
#include "quant/kernels.h"

namespace paddock::cpu {

namespace {

using RefDot = void (*)(int64_t n, float* out, const void* x, const void* y);

template <RefDot F>
void columns(int64_t n, const void* x, const void* y, size_t y_stride, int ny, float* out) {
  for (int j = 0; j < ny; ++j)
    F(n, &out[j], x, static_cast<const uint8_t*>(y) + y_stride * static_cast<size_t>(j));
}

void half_to_float_scalar(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}

void float_to_half_scalar(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_fp16(src[i]);
}

}  // namespace

HalfToFloatFn half_to_float_kernel(CpuIsa isa) {
  HalfToFloatFn f = isa == CpuIsa::kScalar ? nullptr : half_to_float_avx2();
  return f != nullptr ? f : half_to_float_scalar;
}

FloatToHalfFn float_to_half_kernel(CpuIsa isa) {
  FloatToHalfFn f = isa == CpuIsa::kScalar ? nullptr : float_to_half_avx2();
  return f != nullptr ? f : float_to_half_scalar;
}

DotFn dot_kernel_scalar(DType t) {
  switch (t) {
    case DType::kF32: return columns<vec_dot_f32>;
    case DType::kF16: return columns<vec_dot_f16>;
    case DType::kBF16: return columns<vec_dot_bf16>;
    case DType::kQ4_0: return columns<vec_dot_q4_0_q8_0>;
    case DType::kQ4_1: return columns<vec_dot_q4_1_q8_1>;
    case DType::kQ5_0: return columns<vec_dot_q5_0_q8_0>;
    case DType::kQ5_1: return columns<vec_dot_q5_1_q8_1>;
    case DType::kQ8_0: return columns<vec_dot_q8_0_q8_0>;
    case DType::kQ2_K: return columns<vec_dot_q2_K_q8_K>;
    case DType::kQ3_K: return columns<vec_dot_q3_K_q8_K>;
    case DType::kQ4_K: return columns<vec_dot_q4_K_q8_K>;
    case DType::kQ5_K: return columns<vec_dot_q5_K_q8_K>;
    case DType::kQ6_K: return columns<vec_dot_q6_K_q8_K>;
    case DType::kIQ4_NL: return columns<vec_dot_iq4_nl_q8_0>;
    case DType::kIQ4_XS: return columns<vec_dot_iq4_xs_q8_K>;
    case DType::kMXFP4: return columns<vec_dot_mxfp4_q8_0>;
    default: return nullptr;
  }
}

DotFn dot_kernel(CpuIsa isa, DType t) {
  // The avx512 path runs the AVX2 row kernels: models multiply interleaved copies
  // (gemm.h, with VNNI kernels of their own), so rows serve only odd shapes.
  const DotFn f = isa != CpuIsa::kScalar ? dot_kernel_avx2(t) : nullptr;
  return f != nullptr ? f : dot_kernel_scalar(t);
}

}  // namespace paddock::cpu
