// Which SIMD path the CPU backend runs: detected once by CPUID, or forced with
// PADDOCK_CPU=scalar|avx2|avx512 so tests and benchmarks can cover every path on one machine.
// Invariant: a path is only ever selected when the CPU has every feature it was compiled for
// (avx2 = AVX2+FMA+F16C; avx512 = AVX-512 F/BW/VL/VNNI), so kernels never fault.
//   Result<CpuIsa> isa = select_cpu_isa(env_get("CPU"));
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace paddock {

enum class CpuIsa { kScalar, kAvx2, kAvx512 };

std::string_view cpu_isa_name(CpuIsa isa);
std::optional<CpuIsa> cpu_isa_from_name(std::string_view name);  // "scalar", "avx2", "avx512"
bool cpu_has_isa(CpuIsa isa);
CpuIsa best_cpu_isa();
// The forced path when `forced` names one (an error if the CPU lacks it or the name is
// unknown), else the best path this CPU has.
Result<CpuIsa> select_cpu_isa(const std::optional<std::string>& forced);

}  // namespace paddock
