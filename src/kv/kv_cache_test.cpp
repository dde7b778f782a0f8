#include "kv/kv_cache.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

namespace paddock {
namespace {

KvCacheConfig small(DType type) {
  return KvCacheConfig{
      .n_ctx = 8, .n_head_kv = {2, 3}, .head_dim_k = 4, .head_dim_v = 5, .type = type};  // per-layer heads
}

TEST(KvCache, ViewsCoverTheRequestedCells) {
  for (DType type : {DType::kF16, DType::kF32}) {
    Result<KvCache> kv = KvCache::create(small(type), host_device());
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    const TensorView k0 = kv->k(1, 0, 8);
    const TensorView k3 = kv->k(1, 3, 2);
    EXPECT_EQ(k3.type, type);
    EXPECT_EQ(k3.ne[0], 4);
    EXPECT_EQ(k3.ne[1], 3);
    EXPECT_EQ(k3.ne[2], 2);
    EXPECT_EQ(k3.buffer, k0.buffer);
    EXPECT_EQ(k3.offset, k0.offset + 3 * k0.nb[2]);
    EXPECT_EQ(kv->v(0, 0, 1).ne[0], 5);
    EXPECT_EQ(kv->v(0, 0, 1).ne[1], 2);  // layer 0 has 2 kv heads
    EXPECT_NE(kv->k(0, 0, 1).buffer, kv->k(1, 0, 1).buffer);  // layers do not share cells
  }
}

TEST(KvCache, ReserveFailsWhenFullAndCommitAdvances) {
  Result<KvCache> kv = KvCache::create(small(DType::kF16), host_device());
  ASSERT_TRUE(kv.ok());
  EXPECT_TRUE(kv->reserve(8).is_ok());
  const std::vector<int32_t> six = {1, 2, 3, 4, 5, 6};
  kv->commit(six);
  EXPECT_EQ(kv->used(), 6);
  EXPECT_TRUE(kv->reserve(2).is_ok());
  const Status full = kv->reserve(3);
  EXPECT_EQ(full.code(), Code::kOutOfRange);
  EXPECT_EQ(full.message(), "context full: 9 tokens of 8");
  kv->clear();
  EXPECT_EQ(kv->used(), 0);
  EXPECT_TRUE(kv->reserve(8).is_ok());
}

std::span<const uint8_t> bytes_of(const std::vector<float>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)};
}

// Fills cell c of every layer's K and V with the value 100 * layer + c (F32 cache), through
// the buffers as a device's would be filled.
void fill(KvCache& kv, int64_t first, int64_t n) {
  for (int64_t l = 0; l < kv.config().n_layer(); ++l) {
    for (TensorView t : {kv.k(l, first, n), kv.v(l, first, n)}) {
      for (int64_t c = 0; c < n; ++c) {
        const std::vector<float> cell(static_cast<size_t>(t.ne[0] * t.ne[1]),
                                      static_cast<float>(100 * l + first + c));
        t.buffer->set(t.offset + static_cast<size_t>(c) * t.nb[2], bytes_of(cell));
      }
    }
  }
}

// Element (i, head) of a cell of an F32 cache view.
float at(const TensorView& t, int64_t i, int64_t head) {
  float f = 0;
  t.buffer->get(t.offset + static_cast<size_t>(head) * t.nb[1] + static_cast<size_t>(i) * sizeof(float),
                {reinterpret_cast<uint8_t*>(&f), sizeof(f)});
  return f;
}
float k_at(const KvCache& kv, int64_t layer, int64_t cell) { return at(kv.k(layer, cell, 1), 0, 0); }
// The last element of a cell's V: the layer's last kv head (layers differ in head count).
float v_at(const KvCache& kv, int64_t layer, int64_t cell) {
  const TensorView v = kv.v(layer, cell, 1);
  return at(v, v.ne[0] - 1, v.ne[1] - 1);
}

TEST(KvCache, KeepAndRemoveMoveCellsAndTokens) {
  Result<KvCache> kv = KvCache::create(small(DType::kF32), host_device());
  ASSERT_TRUE(kv.ok());
  fill(*kv, 0, 8);
  const std::vector<int32_t> toks = {10, 11, 12, 13, 14, 15, 16, 17};
  kv->commit(toks);

  // remove(2, 3): cells 5..7 move to 2..4, tokens too; their keys need turning by -3.
  const std::vector<MovedKeys> moved = kv->remove(2, 3);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[1].first_cell, 2);
  EXPECT_EQ(moved[1].delta, (std::vector<int32_t>{-3, -3, -3}));
  EXPECT_EQ(std::vector<int32_t>(kv->tokens().begin(), kv->tokens().end()),
            (std::vector<int32_t>{10, 11, 15, 16, 17}));
  EXPECT_EQ(k_at(*kv, 1, 1), 101.0f);
  EXPECT_EQ(k_at(*kv, 1, 2), 105.0f);
  EXPECT_EQ(v_at(*kv, 0, 4), 7.0f);

  EXPECT_EQ(kv->keep(1), 1);
  EXPECT_EQ(kv->used(), 1);
  EXPECT_TRUE(kv->reserve(7).is_ok());
  const PassCells next = kv->pass_cells(0, 2);  // cell = position: the two after position 0
  ASSERT_EQ(next.write.size(), 1u);
  EXPECT_EQ(next.write[0].cell, 1);
  EXPECT_EQ(next.n_read, 3);
  EXPECT_TRUE(next.positions.empty());
}

// Layer 0 slides a window of 4 over passes of at most 3 tokens: a ring of 4 + 3 - 1 cells;
// layer 1 holds every position.
KvCacheConfig windowed() {
  return KvCacheConfig{.n_ctx = 64,
                       .n_head_kv = {2, 2},
                       .head_dim_k = 4,
                       .head_dim_v = 4,
                       .type = DType::kF32,
                       .window = {4, 0},
                       .n_batch = 3};
}

std::vector<int32_t> tokens_of(int64_t n) { return std::vector<int32_t>(static_cast<size_t>(n), 7); }

// Runs a pass of n tokens and returns what layer 0 (the ring) did.
PassCells pass(KvCache& kv, int64_t n) {
  EXPECT_TRUE(kv.reserve(n).is_ok());
  PassCells c = kv.pass_cells(0, n);
  kv.commit(tokens_of(n));
  return c;
}

TEST(KvCache, WindowedLayersAreRingsThatOverwriteWhatNoLaterTokenSees) {
  const KvCacheConfig c = windowed();
  EXPECT_EQ(c.n_cells(0), 6);
  EXPECT_EQ(c.n_cells(1), 64);
  EXPECT_EQ(kv_cache_bytes(c), (6u + 64u) * 2 * 2 * 4 * sizeof(float));
  Result<KvCache> kv = KvCache::create(c, host_device());
  ASSERT_TRUE(kv.ok()) << kv.status().message();
  EXPECT_EQ(kv->k(0, 0, 6).ne[2], 6);

  PassCells p = pass(*kv, 3);  // positions 0..2
  EXPECT_EQ(p.positions, (std::vector<int32_t>{0, 1, 2, -1, -1, -1}));
  EXPECT_EQ(p.n_read, 6);
  p = pass(*kv, 3);  // 3..5 into the empty cells
  ASSERT_EQ(p.write.size(), 1u);
  EXPECT_EQ(p.write[0].cell, 3);
  p = pass(*kv, 3);  // 6..8: position 6 sees 3..6, so 0..2 go
  EXPECT_EQ(p.positions, (std::vector<int32_t>{6, 7, 8, 3, 4, 5}));
  p = pass(*kv, 2);  // 9..10 over 3 and 4
  EXPECT_EQ(p.positions, (std::vector<int32_t>{6, 7, 8, 9, 10, 5}));
  const PassCells full = kv->pass_cells(1, 3);  // the full layer: cell = position
  EXPECT_EQ(full.write[0].cell, 11);
  EXPECT_EQ(full.n_read, 14);
  EXPECT_TRUE(full.positions.empty());
  p = pass(*kv, 3);  // 11..13 wrap around: cell 5, then 0 and 1
  ASSERT_EQ(p.write.size(), 2u);
  EXPECT_EQ(p.write[0].cell, 5);
  EXPECT_EQ(p.write[0].n, 1);
  EXPECT_EQ(p.write[1].cell, 0);
  EXPECT_EQ(p.write[1].n, 2);
  EXPECT_EQ(p.positions, (std::vector<int32_t>{12, 13, 8, 9, 10, 11}));

  const Status big = kv->reserve(4);  // more than the rings were sized for
  EXPECT_EQ(big.code(), Code::kInvalidArgument);
  EXPECT_NE(big.message().find("more than the 3"), std::string::npos) << big.message();
}

TEST(KvCache, RingsKeepOnlyPrefixesWhoseWindowTheyStillHold) {
  Result<KvCache> kv = KvCache::create(windowed(), host_device());
  ASSERT_TRUE(kv.ok());
  for (int i = 0; i < 3; ++i) pass(*kv, 3);  // positions 0..8; the ring holds 3..8
  pass(*kv, 2);                              // 9..10; the ring holds 5..10
  EXPECT_EQ(kv->keep(11), 11);  // nothing to drop
  EXPECT_EQ(kv->keep(9), 9);    // position 9 sees 6..8: held
  // Positions 9 and 10 are gone; 9 goes again where 5 was (no later token sees 5).
  EXPECT_EQ(kv->pass_cells(0, 1).positions, (std::vector<int32_t>{6, 7, 8, -1, -1, 9}));
  EXPECT_EQ(kv->keep(7), 0);  // position 7 would see 4..6, and 4 was overwritten
  EXPECT_EQ(kv->used(), 0);
  EXPECT_EQ(kv->pass_cells(0, 1).positions[5], 0);  // an empty ring
}

TEST(KvCache, RemoveRelabelsRingCellsAndAsksToTurnTheirKeys) {
  Result<KvCache> kv = KvCache::create(windowed(), host_device());
  ASSERT_TRUE(kv.ok());
  for (int i = 0; i < 3; ++i) pass(*kv, 3);  // the ring holds 6, 7, 8, 3, 4, 5
  const std::vector<MovedKeys> moved = kv->remove(4, 3);
  EXPECT_EQ(kv->used(), 6);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0].first_cell, 0);  // the ring: every cell, turned or not
  EXPECT_EQ(moved[0].delta, (std::vector<int32_t>{0, -3, -3, 0, 0, 0}));
  EXPECT_EQ(moved[1].first_cell, 4);  // the full layer: cells 7, 8 moved down to 4, 5
  EXPECT_EQ(moved[1].delta, (std::vector<int32_t>{-3, -3}));
  // 4..6 dropped, 7 and 8 now 4 and 5; position 6 goes to the first free cell from the cursor.
  EXPECT_EQ(kv->pass_cells(0, 1).positions, (std::vector<int32_t>{-1, 4, 5, 3, 6, -1}));
}

TEST(KvCache, AGroupsSequencesHoldDisjointCellsOfSharedBuffers) {
  Result<std::vector<KvCache>> group = KvCache::create_group(windowed(), 3, host_device());
  ASSERT_TRUE(group.ok()) << group.status().message();
  ASSERT_EQ(group->size(), 3u);
  KvCache& one = (*group)[1];
  EXPECT_TRUE(one.same_group((*group)[2]));
  for (int64_t l : {0, 1}) {
    const int64_t cells = windowed().n_cells(l);
    const TensorView all = one.group_k(l);
    EXPECT_EQ(all.ne[2], 3 * cells);
    EXPECT_EQ(one.group_v(l).ne[2], 3 * cells);
    EXPECT_EQ(one.group_cell(l), cells);  // the second sequence's cells follow the first's
    EXPECT_EQ(one.k(l, 2, 1).buffer, all.buffer);
    EXPECT_EQ(one.k(l, 2, 1).offset, all.offset + static_cast<size_t>(cells + 2) * all.nb[2]);
  }
  // Filling and shifting one sequence leaves its neighbours' cells as they were.
  fill(one, 0, 6);
  one.commit(tokens_of(6));
  one.remove(1, 2);
  EXPECT_EQ(k_at(one, 1, 1), 103.0f);
  for (const KvCache* other : {&(*group)[0], &(*group)[2]}) {
    for (int64_t cell = 0; cell < 6; ++cell) EXPECT_EQ(k_at(*other, 1, cell), 0.0f);
    EXPECT_EQ(other->used(), 0);
  }
  // Separate caches (not a group) when a shared layer buffer would pass the limit.
  const uint64_t layer_k = 64 * 2 * 4 * sizeof(float);  // layer 1's K: 64 cells of 2 heads of 4
  Result<std::vector<KvCache>> apart = KvCache::create_group(windowed(), 2, host_device(), 2 * layer_k - 1);
  ASSERT_TRUE(apart.ok());
  EXPECT_FALSE((*apart)[0].same_group((*apart)[1]));
  EXPECT_EQ((*apart)[0].group_k(1).ne[2], 64);
  Result<std::vector<KvCache>> shared = KvCache::create_group(windowed(), 2, host_device(), 2 * layer_k);
  ASSERT_TRUE(shared.ok());
  EXPECT_TRUE((*shared)[0].same_group((*shared)[1]));
  EXPECT_EQ(KvCache::create_group(windowed(), 0, host_device()).status().code(), Code::kInvalidArgument);
}

TEST(KvCache, BlockTypesNeedWholeBlocks) {
  EXPECT_TRUE(kv_type_fits(DType::kQ8_0, 64, 32));
  EXPECT_FALSE(kv_type_fits(DType::kQ8_0, 8, 8));
  EXPECT_FALSE(kv_type_fits(DType::kQ4_K, 256, 256));
  KvCacheConfig c = small(DType::kQ8_0);
  c.head_dim_k = 64;
  c.head_dim_v = 32;
  Result<KvCache> kv = KvCache::create(c, host_device());
  ASSERT_TRUE(kv.ok()) << kv.status().to_string();
  EXPECT_EQ(kv->k(0, 0, 1).nb[1], 2 * 34u);  // two Q8_0 blocks of 34 bytes per head row
  // 8 cells x (2 + 3 heads) x (2 + 1 blocks of 34 bytes).
  EXPECT_EQ(kv_cache_bytes(c), 8u * 5 * 3 * 34);
}

TEST(KvCache, RejectsBadConfigs) {
  KvCacheConfig c = small(DType::kF16);
  c.n_ctx = 0;
  EXPECT_EQ(KvCache::create(c, host_device()).status().code(), Code::kInvalidArgument);
  c = small(DType::kF16);
  c.n_head_kv = {2, 0};
  EXPECT_EQ(KvCache::create(c, host_device()).status().message(),
            "KV cache: expected positive sizes, found n_ctx 8, n_layer 2, n_head_kv [2,0], head_dim 4/5");
  EXPECT_EQ(kv_cache_bytes(c), 0u);
  c = small(DType::kQ4_0);
  const Status s = KvCache::create(c, host_device()).status();
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_NE(s.message().find("Q4_0"), std::string::npos);
  c = small(DType::kF32);
  c.n_ctx = int64_t{1} << 40;
  c.head_dim_k = int64_t{1} << 30;
  EXPECT_EQ(KvCache::create(c, host_device()).status().code(), Code::kResourceExhausted);
}

}  // namespace
}  // namespace paddock
