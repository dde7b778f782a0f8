// Helpers shared by the cpu backend's unit tests: the ISA paths to run, and deterministic
// Gaussian data (quant/test_data.h).
//   for (CpuIsa isa : kAllIsas) { PADDOCK_SKIP_WITHOUT_ISA(isa); ... }
#pragma once

#include <gtest/gtest.h>

#include <array>

#include "backend/cpu/isa.h"

namespace paddock::cpu_test {

inline constexpr std::array<CpuIsa, 3> kAllIsas = {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512};

inline std::string isa_param_name(const ::testing::TestParamInfo<CpuIsa>& info) {
  return std::string(cpu_isa_name(info.param));
}

}  // namespace paddock::cpu_test

#define PADDOCK_SKIP_WITHOUT_ISA(isa)                                                                 \
  do {                                                                                                \
    if (!::paddock::cpu_has_isa(isa))                                                                 \
      GTEST_SKIP() << "SKIPPED LOUDLY: this CPU lacks " << ::paddock::cpu_isa_name(isa)               \
                   << "; its kernels are compiled but only run where CPUID reports the instructions"; \
  } while (0)
