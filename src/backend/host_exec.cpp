#include "backend/host_exec.h"

#include <algorithm>
#include <vector>

#include "base/check.h"
#include "quant/quant.h"

namespace paddock {

bool all_f32(std::span<const DType> types) {
  return std::all_of(types.begin(), types.end(), [](DType t) { return t == DType::kF32; });
}

bool attention_types(std::span<const DType> types) {
  return (types.size() == 3 || (types.size() == 4 && types[3] == DType::kF32)) && types[0] == DType::kF32 &&
         is_kv_cache_type(types[1]) && types[2] == types[1];
}

bool supports_copy(std::span<const DType> types) {
  const auto ok = [](DType t) { return t == DType::kBF16 || is_kv_cache_type(t); };
  return !types.empty() && ok(types[0]);
}

void copy_through_f32(const TensorView& src, const TensorView& dst) {
  PADDOCK_CHECK(src.same_shape(dst));
  const QuantOps* from = quant_ops(src.type);
  const QuantizeRowFn quantize = from_float(dst.type);
  PADDOCK_CHECK(from != nullptr && from->dequantize_row != nullptr && quantize != nullptr);
  PADDOCK_CHECK(src.nb[0] == dtype_info(src.type).type_size && dst.nb[0] == dtype_info(dst.type).type_size);
  std::vector<float> row(static_cast<size_t>(src.ne[0]));
  for (int64_t i3 = 0; i3 < src.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < src.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < src.ne[1]; ++i1) {
        from->dequantize_row(src.row(i1, i2, i3), row.data(), src.ne[0]);
        quantize(row.data(), dst.row(i1, i2, i3), src.ne[0]);
      }
    }
  }
}

}  // namespace paddock
