#include "quant/quant.h"

#include <array>

#include "base/check.h"
#include "quant/kernels.h"

namespace paddock {

namespace {

constexpr QuantOps kNone{DType::kF32, nullptr, nullptr, DType::kF32, nullptr};

// Indexed by GGUF id. A row with a null dequantize_row is a type paddock cannot compute with.
constexpr std::array<QuantOps, kDTypeIdCount> kTable = {{
    {DType::kF32, dequantize_row_f32, quantize_row_f32, DType::kF32, vec_dot_f32},
    {DType::kF16, dequantize_row_f16, quantize_row_f16, DType::kF16, vec_dot_f16},
    {DType::kQ4_0, dequantize_row_q4_0, quantize_row_q4_0, DType::kQ8_0, vec_dot_q4_0_q8_0},
    {DType::kQ4_1, dequantize_row_q4_1, quantize_row_q4_1, DType::kQ8_1, vec_dot_q4_1_q8_1},
    kNone,  // 4: Q4_2 (retired)
    kNone,  // 5: Q4_3 (retired)
    {DType::kQ5_0, dequantize_row_q5_0, quantize_row_q5_0, DType::kQ8_0, vec_dot_q5_0_q8_0},
    {DType::kQ5_1, dequantize_row_q5_1, quantize_row_q5_1, DType::kQ8_1, vec_dot_q5_1_q8_1},
    {DType::kQ8_0, dequantize_row_q8_0, quantize_row_q8_0, DType::kQ8_0, vec_dot_q8_0_q8_0},
    {DType::kQ8_1, dequantize_row_q8_1, quantize_row_q8_1, DType::kQ8_1, nullptr},
    {DType::kQ2_K, dequantize_row_q2_K, quantize_row_q2_K, DType::kQ8_K, vec_dot_q2_K_q8_K},
    {DType::kQ3_K, dequantize_row_q3_K, quantize_row_q3_K, DType::kQ8_K, vec_dot_q3_K_q8_K},
    {DType::kQ4_K, dequantize_row_q4_K, quantize_row_q4_K, DType::kQ8_K, vec_dot_q4_K_q8_K},
    {DType::kQ5_K, dequantize_row_q5_K, quantize_row_q5_K, DType::kQ8_K, vec_dot_q5_K_q8_K},
    {DType::kQ6_K, dequantize_row_q6_K, quantize_row_q6_K, DType::kQ8_K, vec_dot_q6_K_q8_K},
    {DType::kQ8_K, dequantize_row_q8_K, quantize_row_q8_K, DType::kQ8_K, nullptr},
    kNone,  // 16: IQ2_XXS
    kNone,  // 17: IQ2_XS
    kNone,  // 18: IQ3_XXS
    kNone,  // 19: IQ1_S
    {DType::kIQ4_NL, dequantize_row_iq4_nl, quantize_row_iq4_nl, DType::kQ8_0, vec_dot_iq4_nl_q8_0},
    kNone,  // 21: IQ3_S
    kNone,  // 22: IQ2_S
    {DType::kIQ4_XS, dequantize_row_iq4_xs, quantize_row_iq4_xs, DType::kQ8_K, vec_dot_iq4_xs_q8_K},
    kNone,  // 24: I8
    kNone,  // 25: I16
    kNone,  // 26: I32
    kNone,  // 27: I64
    kNone,  // 28: F64
    kNone,  // 29: IQ1_M
    {DType::kBF16, dequantize_row_bf16, quantize_row_bf16, DType::kBF16, vec_dot_bf16},
    kNone,  // 31: Q4_0_4_4 (retired)
    kNone,  // 32: Q4_0_4_8 (retired)
    kNone,  // 33: Q4_0_8_8 (retired)
    kNone,  // 34: TQ1_0
    kNone,  // 35: TQ2_0
    kNone,  // 36: IQ4_NL_4_4 (retired)
    kNone,  // 37: IQ4_NL_4_8 (retired)
    kNone,  // 38: IQ4_NL_8_8 (retired)
    {DType::kMXFP4, dequantize_row_mxfp4, quantize_row_mxfp4, DType::kQ8_0, vec_dot_mxfp4_q8_0},
}};

constexpr bool rows_at_their_id() {
  for (uint32_t i = 0; i < kTable.size(); ++i) {
    if (kTable[i].dequantize_row != nullptr && static_cast<uint32_t>(kTable[i].type) != i) return false;
  }
  return true;
}
static_assert(rows_at_their_id(), "quant table rows must sit at their GGUF id");
static_assert(kTable.size() == static_cast<uint32_t>(DType::kMXFP4) + 1);

// Every vec_dot_type must itself have a row with a quantizer, or activations cannot be prepared.
constexpr bool vec_dot_types_quantizable() {
  for (const QuantOps& row : kTable) {
    if (row.vec_dot == nullptr) continue;
    const QuantOps& act = kTable[static_cast<uint32_t>(row.vec_dot_type)];
    if (act.dequantize_row == nullptr || act.quantize_row == nullptr) return false;
  }
  return true;
}
static_assert(vec_dot_types_quantizable(), "a vec_dot_type without a quantizer");

}  // namespace

const QuantOps* quant_ops(DType t) {
  const auto id = static_cast<uint32_t>(t);
  if (id >= kTable.size() || kTable[id].dequantize_row == nullptr) return nullptr;
  return &kTable[id];
}

std::vector<uint8_t> quantize(DType t, std::span<const float> src) {
  const QuantOps* ops = quant_ops(t);
  PADDOCK_CHECK(ops != nullptr && ops->quantize_row != nullptr);
  const auto n = static_cast<int64_t>(src.size());
  std::vector<uint8_t> out(dtype_row_bytes(t, n));
  ops->quantize_row(src.data(), out.data(), n);
  return out;
}

std::vector<float> dequantize(DType t, std::span<const uint8_t> src, int64_t n) {
  const QuantOps* ops = quant_ops(t);
  PADDOCK_CHECK(ops != nullptr);
  PADDOCK_CHECK(src.size() >= dtype_row_bytes(t, n));
  std::vector<float> out(static_cast<size_t>(n));
  ops->dequantize_row(src.data(), out.data(), n);
  return out;
}

QuantizeRowFn from_float(DType t) {
  switch (t) {
    case DType::kQ8_0: return quantize_row_q8_0_x86;
    case DType::kQ8_1: return quantize_row_q8_1_x86;
    default: {
      const QuantOps* ops = quant_ops(t);
      return ops != nullptr ? ops->quantize_row : nullptr;
    }
  }
}

float quantized_dot(DType t, const void* x, std::span<const float> y) {
  const QuantOps* ops = quant_ops(t);
  PADDOCK_CHECK(ops != nullptr && ops->vec_dot != nullptr);
  const auto n = static_cast<int64_t>(y.size());
  std::vector<uint8_t> act(dtype_row_bytes(ops->vec_dot_type, n));
  from_float(ops->vec_dot_type)(y.data(), act.data(), n);
  float out = 0;
  ops->vec_dot(static_cast<int64_t>(y.size()), &out, x, act.data());
  return out;
}

}  // namespace paddock
