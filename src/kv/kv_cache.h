// The KV cache of one sequence: per layer, K [head_dim_k, n_head_kv, n_ctx] and V
// [head_dim_v, n_head_kv, n_ctx] in F16 (default) or F32. Cell i holds position i; cells
// 0..used()-1 are filled. A forward pass reserves room for its tokens, writes their K/V rows
// into the cells after used(), and commits them when the pass succeeded.
//   PADDOCK_ASSIGN(KvCache kv, KvCache::create({.n_ctx = 1024, .n_layer = 2, ...}));
//   PADDOCK_TRY(kv.reserve(n_tokens));  ...  kv.commit(n_tokens);
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"

namespace paddock {

struct KvCacheConfig {
  int64_t n_ctx = 0;
  int64_t n_layer = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim_k = 0;
  int64_t head_dim_v = 0;
  DType type = DType::kF16;  // F16 or F32
};

class KvCache {
 public:
  // Fails on non-positive sizes, an unsupported type, or a size that overflows.
  static Result<KvCache> create(const KvCacheConfig& config);

  const KvCacheConfig& config() const { return config_; }
  int64_t n_ctx() const { return config_.n_ctx; }
  int64_t used() const { return used_; }
  // kOutOfRange "context full: N tokens of M" when n_tokens more do not fit.
  Status reserve(int64_t n_tokens) const;
  // Marks the next n_tokens cells filled (after reserve succeeded for them).
  void commit(int64_t n_tokens);
  void clear() { used_ = 0; }

  // Cells [first, first + n) of a layer: [head_dim, n_head_kv, n].
  TensorView k(int64_t layer, int64_t first, int64_t n);
  TensorView v(int64_t layer, int64_t first, int64_t n);

 private:
  explicit KvCache(const KvCacheConfig& config) : config_(config) {}
  TensorView view(std::vector<uint8_t>& buf, int64_t head_dim, int64_t first, int64_t n) const;

  KvCacheConfig config_;
  int64_t used_ = 0;
  std::vector<std::vector<uint8_t>> k_;  // one buffer per layer
  std::vector<std::vector<uint8_t>> v_;
};

}  // namespace paddock
