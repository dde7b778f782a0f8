// The interleaved-weight kernels of the x86 paths (gemm_x86.h): AVX2 with maddubs, and
// AVX-512 VNNI with vpdpbusd. The VNNI kernels are the same AVX2-target functions with
// vpdpbusd issued through inline assembly: a function built for AVX-512 could not share the
// kernel source with AVX2 (nor with the emulation the tests use), and EVEX vpdpbusd on ymm
// registers is what that path needs. CPUID dispatch (isa.h) guarantees the instruction exists.
#include "backend/cpu/gemm_x86.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

struct Vpdpbusd {
  PADDOCK_GEMM_INLINE static __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
    asm("vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u), "x"(s));
    return acc;
  }
  // The 4 bytes at y broadcast by the instruction itself ({1to8}): no separate shuffle.
  PADDOCK_GEMM_INLINE static __m256i dpbusd_bcast(__m256i acc, __m256i u, const int8_t* y) {
    asm("vpdpbusd %2%{1to8%}, %1, %0" : "+x"(acc) : "x"(u), "m"(*reinterpret_cast<const int32_t*>(y)));
    return acc;
  }
};

}  // namespace

GemmFn gemm_kernel_avx2(DType t) { return gemm_x86::kernel_for<gemm_x86::Maddubs>(t); }
GemmFn gemm_kernel_avx512(DType t) { return gemm_x86::kernel_for<gemm_x86::Vnni<Vpdpbusd>>(t); }

#else

GemmFn gemm_kernel_avx2(DType) { return nullptr; }
GemmFn gemm_kernel_avx512(DType) { return nullptr; }

#endif

GemmFn gemm_kernel(CpuIsa isa, DType t) {
  switch (isa) {
    case CpuIsa::kScalar: return nullptr;
    case CpuIsa::kAvx2: return gemm_kernel_avx2(t);
    case CpuIsa::kAvx512: return gemm_kernel_avx512(t);
  }
  return nullptr;
}

}  // namespace paddock::cpu
