#include "kv/kv_cache.h"

#include <gtest/gtest.h>

namespace paddock {
namespace {

KvCacheConfig small(DType type) {
  return KvCacheConfig{
      .n_ctx = 8, .n_layer = 2, .n_head_kv = 3, .head_dim_k = 4, .head_dim_v = 5, .type = type};
}

TEST(KvCache, ViewsCoverTheRequestedCells) {
  for (DType type : {DType::kF16, DType::kF32}) {
    Result<KvCache> kv = KvCache::create(small(type));
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    const TensorView k0 = kv->k(1, 0, 8);
    const TensorView k3 = kv->k(1, 3, 2);
    EXPECT_EQ(k3.type, type);
    EXPECT_EQ(k3.ne[0], 4);
    EXPECT_EQ(k3.ne[1], 3);
    EXPECT_EQ(k3.ne[2], 2);
    EXPECT_EQ(static_cast<uint8_t*>(k3.data), static_cast<uint8_t*>(k0.data) + 3 * k0.nb[2]);
    EXPECT_EQ(kv->v(0, 0, 1).ne[0], 5);
    EXPECT_NE(kv->k(0, 0, 1).data, kv->k(1, 0, 1).data);  // layers do not share cells
  }
}

TEST(KvCache, ReserveFailsWhenFullAndCommitAdvances) {
  Result<KvCache> kv = KvCache::create(small(DType::kF16));
  ASSERT_TRUE(kv.ok());
  EXPECT_TRUE(kv->reserve(8).is_ok());
  kv->commit(6);
  EXPECT_EQ(kv->used(), 6);
  EXPECT_TRUE(kv->reserve(2).is_ok());
  const Status full = kv->reserve(3);
  EXPECT_EQ(full.code(), Code::kOutOfRange);
  EXPECT_EQ(full.message(), "context full: 9 tokens of 8");
  kv->clear();
  EXPECT_EQ(kv->used(), 0);
  EXPECT_TRUE(kv->reserve(8).is_ok());
}

TEST(KvCache, RejectsBadConfigs) {
  KvCacheConfig c = small(DType::kF16);
  c.n_ctx = 0;
  EXPECT_EQ(KvCache::create(c).status().code(), Code::kInvalidArgument);
  c = small(DType::kQ4_0);
  const Status s = KvCache::create(c).status();
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_NE(s.message().find("Q4_0"), std::string::npos);
  c = small(DType::kF32);
  c.n_ctx = int64_t{1} << 40;
  c.head_dim_k = int64_t{1} << 30;
  EXPECT_EQ(KvCache::create(c).status().code(), Code::kResourceExhausted);
}

}  // namespace
}  // namespace paddock
