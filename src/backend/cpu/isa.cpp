#include "backend/cpu/isa.h"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace paddock {

std::string_view cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kScalar: return "scalar";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kAvx512: return "avx512";
  }
  return "?";
}

std::optional<CpuIsa> cpu_isa_from_name(std::string_view name) {
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (cpu_isa_name(isa) == name) return isa;
  }
  return std::nullopt;
}

#if defined(__x86_64__)
namespace {

struct X86Features {
  bool avx2 = false;
  bool avx512 = false;
};

// CPUID feature bits, and XGETBV to check that the OS saves the wider register state.
X86Features detect_x86() {
  X86Features f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool fma = c & (1u << 12);
  const bool osxsave = c & (1u << 27);
  const bool avx = c & (1u << 28);
  const bool f16c = c & (1u << 29);
  if (!osxsave || !avx) return f;
  uint32_t xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool ymm_state = (xcr0_lo & 0x6) == 0x6;
  const bool zmm_state = (xcr0_lo & 0xE6) == 0xE6;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  f.avx2 = ymm_state && fma && f16c && (b & (1u << 5));
  const bool avx512f = b & (1u << 16);
  const bool avx512bw = b & (1u << 30);
  const bool avx512vl = b & (1u << 31);
  const bool vnni = c & (1u << 11);
  f.avx512 = f.avx2 && zmm_state && avx512f && avx512bw && avx512vl && vnni;
  return f;
}

}  // namespace
#endif

bool cpu_has_isa(CpuIsa isa) {
#if defined(__x86_64__)
  static const X86Features features = detect_x86();
  switch (isa) {
    case CpuIsa::kScalar: return true;
    case CpuIsa::kAvx2: return features.avx2;
    case CpuIsa::kAvx512: return features.avx512;
  }
  return false;
#else
  return isa == CpuIsa::kScalar;
#endif
}

CpuIsa best_cpu_isa() {
  if (cpu_has_isa(CpuIsa::kAvx512)) return CpuIsa::kAvx512;
  if (cpu_has_isa(CpuIsa::kAvx2)) return CpuIsa::kAvx2;
  return CpuIsa::kScalar;
}

Result<CpuIsa> select_cpu_isa(const std::optional<std::string>& forced) {
  if (!forced || forced->empty()) return best_cpu_isa();
  const std::optional<CpuIsa> isa = cpu_isa_from_name(*forced);
  if (!isa) {
    return invalid_argument("PADDOCK_CPU: expected scalar, avx2 or avx512, found \"" + *forced + "\"");
  }
  if (!cpu_has_isa(*isa)) {
    return unsupported("PADDOCK_CPU=" + *forced +
                       ": this CPU lacks the instructions it needs (best available: " +
                       std::string(cpu_isa_name(best_cpu_isa())) + ")");
  }
  return *isa;
}

}  // namespace paddock
