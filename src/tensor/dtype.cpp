#include "tensor/dtype.h"

#include <array>
#include <cctype>

#include "base/check.h"

namespace paddock {

namespace {

constexpr DTypeInfo kRetired{DType::kF32, "(retired)", 1, 1, false, false};

// Indexed by GGUF id. "supported" flips to true as kernels land (quant/ table).
constexpr std::array<DTypeInfo, kDTypeIdCount> kTable = {{
    {DType::kF32, "F32", 1, 4, true, true},
    {DType::kF16, "F16", 1, 2, true, true},
    {DType::kQ4_0, "Q4_0", 32, 18, true, true},
    {DType::kQ4_1, "Q4_1", 32, 20, true, true},
    kRetired,  // 4: Q4_2
    kRetired,  // 5: Q4_3
    {DType::kQ5_0, "Q5_0", 32, 22, true, true},
    {DType::kQ5_1, "Q5_1", 32, 24, true, true},
    {DType::kQ8_0, "Q8_0", 32, 34, true, true},
    {DType::kQ8_1, "Q8_1", 32, 36, true, false},
    {DType::kQ2_K, "Q2_K", 256, 84, true, true},
    {DType::kQ3_K, "Q3_K", 256, 110, true, true},
    {DType::kQ4_K, "Q4_K", 256, 144, true, true},
    {DType::kQ5_K, "Q5_K", 256, 176, true, true},
    {DType::kQ6_K, "Q6_K", 256, 210, true, true},
    {DType::kQ8_K, "Q8_K", 256, 292, true, false},
    {DType::kIQ2_XXS, "IQ2_XXS", 256, 66, true, false},
    {DType::kIQ2_XS, "IQ2_XS", 256, 74, true, false},
    {DType::kIQ3_XXS, "IQ3_XXS", 256, 98, true, false},
    {DType::kIQ1_S, "IQ1_S", 256, 50, true, false},
    {DType::kIQ4_NL, "IQ4_NL", 32, 18, true, true},
    {DType::kIQ3_S, "IQ3_S", 256, 110, true, false},
    {DType::kIQ2_S, "IQ2_S", 256, 82, true, false},
    {DType::kIQ4_XS, "IQ4_XS", 256, 136, true, true},
    {DType::kI8, "I8", 1, 1, true, false},
    {DType::kI16, "I16", 1, 2, true, false},
    {DType::kI32, "I32", 1, 4, true, false},
    {DType::kI64, "I64", 1, 8, true, false},
    {DType::kF64, "F64", 1, 8, true, false},
    {DType::kIQ1_M, "IQ1_M", 256, 56, true, false},
    {DType::kBF16, "BF16", 1, 2, true, true},
    kRetired,  // 31: Q4_0_4_4
    kRetired,  // 32: Q4_0_4_8
    kRetired,  // 33: Q4_0_8_8
    {DType::kTQ1_0, "TQ1_0", 256, 54, true, false},
    {DType::kTQ2_0, "TQ2_0", 256, 66, true, false},
    kRetired,  // 36: IQ4_NL_4_4
    kRetired,  // 37: IQ4_NL_4_8
    kRetired,  // 38: IQ4_NL_8_8
    {DType::kMXFP4, "MXFP4", 32, 17, true, true},
}};

constexpr bool table_in_id_order() {
  for (uint32_t i = 0; i < kTable.size(); ++i) {
    if (kTable[i].valid && static_cast<uint32_t>(kTable[i].type) != i) return false;
  }
  return true;
}
static_assert(table_in_id_order(), "DType table rows must sit at their GGUF id");
static_assert(kTable.size() == static_cast<uint32_t>(DType::kMXFP4) + 1);

}  // namespace

std::optional<DType> dtype_from_id(uint32_t id) {
  if (id >= kTable.size() || !kTable[id].valid) return std::nullopt;
  return static_cast<DType>(id);
}

const DTypeInfo& dtype_info(DType t) {
  const auto id = static_cast<uint32_t>(t);
  PADDOCK_CHECK(id < kTable.size() && kTable[id].valid);
  return kTable[id];
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& row : kTable) {
    if (!row.valid || row.name.size() != name.size()) continue;
    bool eq = true;
    for (size_t i = 0; i < name.size() && eq; ++i) {
      eq = std::toupper(static_cast<unsigned char>(name[i])) == row.name[i];
    }
    if (eq) return row.type;
  }
  return std::nullopt;
}

size_t dtype_row_bytes(DType t, int64_t n) {
  const DTypeInfo& info = dtype_info(t);
  PADDOCK_CHECK(n >= 0 && n % info.block_size == 0);
  return static_cast<size_t>(n / info.block_size) * info.type_size;
}

}  // namespace paddock
