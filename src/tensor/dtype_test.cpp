#include "tensor/dtype.h"

#include <gtest/gtest.h>

namespace paddock {
namespace {

TEST(DType, EveryValidIdRoundTripsThroughNameAndId) {
  int valid = 0;
  for (uint32_t id = 0; id < kDTypeIdCount; ++id) {
    auto t = dtype_from_id(id);
    if (!t) continue;
    ++valid;
    const DTypeInfo& info = dtype_info(*t);
    EXPECT_EQ(static_cast<uint32_t>(info.type), id);
    EXPECT_EQ(dtype_from_name(info.name), t);
    EXPECT_GT(info.block_size, 0u);
    EXPECT_GT(info.type_size, 0u);
  }
  EXPECT_EQ(valid, 32);
}

TEST(DType, RetiredAndUnknownIdsAreRejected) {
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 1000u}) EXPECT_FALSE(dtype_from_id(id)) << id;
}

TEST(DType, KnownSizesMatchGgml) {
  EXPECT_EQ(dtype_row_bytes(DType::kQ4_K, 512), 2u * 144);
  EXPECT_EQ(dtype_row_bytes(DType::kQ8_0, 64), 2u * 34);
  EXPECT_EQ(dtype_row_bytes(DType::kF16, 7), 14u);
  EXPECT_EQ(dtype_from_name("q6_k"), DType::kQ6_K);
  EXPECT_FALSE(dtype_from_name("Q9_9"));
}

}  // namespace
}  // namespace paddock
