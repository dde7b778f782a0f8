// The DType table: one row per GGUF tensor type id, in id order. Name, block size (elements
// per block), bytes per block, and whether paddock computes with it yet. Quant kernels live
// in quant/ (their own table, indexed by the same id). Adding a type = one row here.
//   const DTypeInfo& t = dtype_info(DType::kQ4_K); row_bytes = n / t.block_size * t.type_size;
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace paddock {

// Values are the GGUF type ids (ggml_type); gaps are ids GGUF retired.
enum class DType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3,
  kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15,
  kIQ2_XXS = 16, kIQ2_XS = 17, kIQ3_XXS = 18, kIQ1_S = 19, kIQ4_NL = 20, kIQ3_S = 21,
  kIQ2_S = 22, kIQ4_XS = 23, kI8 = 24, kI16 = 25, kI32 = 26, kI64 = 27, kF64 = 28,
  kIQ1_M = 29, kBF16 = 30, kTQ1_0 = 34, kTQ2_0 = 35, kMXFP4 = 39,
};
inline constexpr uint32_t kDTypeIdCount = 40;  // ids are < this

struct DTypeInfo {
  DType type;
  std::string_view name;  // GGUF/llama.cpp spelling: "Q4_K", "F16"
  uint32_t block_size;    // elements per block
  uint32_t type_size;     // bytes per block
  bool valid;             // false for retired ids
  bool supported;         // paddock can compute with it
};

// nullopt for ids GGUF never assigned or retired.
std::optional<DType> dtype_from_id(uint32_t id);
const DTypeInfo& dtype_info(DType t);
inline std::string_view dtype_name(DType t) { return dtype_info(t).name; }
std::optional<DType> dtype_from_name(std::string_view name);  // case-insensitive

// Bytes of a row of n elements; n must be a multiple of the block size (checked by callers
// that hold untrusted shapes; here it is an invariant).
size_t dtype_row_bytes(DType t, int64_t n);

}  // namespace paddock
