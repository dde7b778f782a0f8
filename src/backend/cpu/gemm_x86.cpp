// The interleaved-weight kernels of the x86 paths (gemm_x86.h): AVX2 with maddubs, and
// AVX-512 VNNI with vpdpbusd, the latter compiled for AVX-512 (32 vector registers; CPUID
// dispatch, isa.h, guarantees the instructions exist). vpdpbusd is issued through inline
// assembly so that the kernel source, written for AVX2, is shared with the AVX2 path and with
// the emulation the tests use.
#include "backend/cpu/gemm_x86.h"

namespace paddock::cpu {

#if defined(PADDOCK_X86)

namespace {

struct Vpdpbusd {
  PADDOCK_GEMM_INLINE static __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
    asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
    return acc;
  }
  // The 4 bytes at y broadcast by the instruction itself ({1to8}): no separate shuffle.
  PADDOCK_GEMM_INLINE static __m256i dpbusd_bcast(__m256i acc, __m256i u, const int8_t* y) {
    asm("vpdpbusd %2%{1to8%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*reinterpret_cast<const int32_t*>(y)));
    return acc;
  }
};

}  // namespace

PADDOCK_GEMM_KERNELS(gemm_kernel_avx2, gemm_x86::Maddubs, PADDOCK_TARGET_AVX2)
PADDOCK_GEMM_KERNELS(gemm_kernel_vnni, gemm_x86::Vnni<Vpdpbusd>, PADDOCK_TARGET_AVX512)

// Q8_0 and MXFP4 sum 8 lanes per row in float (lanes_n): 512-bit registers halve that work.
GemmFn gemm_kernel_avx512(DType t) {
  const GemmFn wide = gemm_lanes_avx512(t);
  return wide != nullptr ? wide : gemm_kernel_vnni(t);
}

#else

GemmFn gemm_kernel_avx2(DType) { return nullptr; }
GemmFn gemm_kernel_avx512(DType) { return nullptr; }

#endif

bool gemm_offsets_activations(CpuIsa isa, DType t) {
  return isa == CpuIsa::kAvx512 &&
         (t == DType::kQ8_0 || t == DType::kQ4_0 || t == DType::kQ5_0 || t == DType::kMXFP4) &&
         gemm_kernel(isa, t) != nullptr;
}

void offset_activations(uint8_t* q8_0_row, int64_t n) {
  auto* blocks = reinterpret_cast<BlockQ8_0*>(q8_0_row);
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    for (int8_t& q : blocks[b].qs) q = static_cast<int8_t>(static_cast<uint8_t>(q) ^ 0x80);
  }
}

GemmFn gemm_kernel(CpuIsa isa, DType t) {
  switch (isa) {
    case CpuIsa::kScalar: return nullptr;
    case CpuIsa::kAvx2: return gemm_kernel_avx2(t);
    case CpuIsa::kAvx512: return gemm_kernel_avx512(t);
  }
  return nullptr;
}

}  // namespace paddock::cpu
