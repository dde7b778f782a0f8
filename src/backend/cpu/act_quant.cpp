#include "backend/cpu/act_quant.h"

#include "quant/quant.h"

namespace paddock::cpu {

ActQuantFn act_quantizer(CpuIsa isa, DType t) {
  if (isa != CpuIsa::kScalar) {
    if (const ActQuantFn f = act_quantizer_avx2(t)) return f;
  }
  return from_float(t);
}

}  // namespace paddock::cpu
