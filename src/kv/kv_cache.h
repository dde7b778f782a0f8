// The KV cache of one sequence: per layer, K [head_dim_k, n_head_kv, n_ctx] and V
// [head_dim_v, n_head_kv, n_ctx] (n_head_kv may differ between layers) in F16 (default), F32, Q8_0 or Q4_0 (llama.cpp's block
// layouts; the quantized types need head dims that are whole blocks). Cell i holds position
// i; cells 0..used()-1 are filled, and tokens() remembers which token each filled cell
// holds, so a later request can reuse a shared prefix. A batch is one KvCache per sequence.
// Each layer's K and V are buffers on the device that computes the layer; the cache moves
// bytes only through them. A forward pass reserves room for its tokens, records copies of
// their K/V rows into the views k() / v() of the cells after used(), and commits them when
// the pass succeeded.
//   PADDOCK_ASSIGN(KvCache kv, KvCache::create({.n_ctx = 1024, .n_head_kv = {8, 8}, ...}, be->device()));
//   PADDOCK_TRY(kv.reserve(n_tokens));  ...  kv.commit(tokens);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"

namespace paddock {

struct KvCacheConfig {
  int64_t n_ctx = 0;
  std::vector<int64_t> n_head_kv;  // per layer: the cache has n_head_kv.size() layers
  int64_t head_dim_k = 0;
  int64_t head_dim_v = 0;
  DType type = DType::kF16;  // is_kv_cache_type: F16, F32, Q8_0 or Q4_0

  int64_t n_layer() const { return static_cast<int64_t>(n_head_kv.size()); }
  bool operator==(const KvCacheConfig&) const = default;
};

// Whether a cache of `type` can hold heads of these sizes (block types need whole blocks).
bool kv_type_fits(DType type, int64_t head_dim_k, int64_t head_dim_v);
// Bytes a cache with this config holds (0 when the config is invalid).
uint64_t kv_cache_bytes(const KvCacheConfig& config);

class KvCache {
 public:
  // Fails on non-positive sizes, an unsupported type (or one the head dims do not fit), a
  // size that overflows, or a device out of memory. Cells start zeroed. Each layer's cells
  // live on the device of the backend that computes the layer (Backend::for_layer), or all
  // on `device`.
  static Result<KvCache> create(const KvCacheConfig& config, Backend& backend);
  static Result<KvCache> create(const KvCacheConfig& config, Device& device);

  const KvCacheConfig& config() const { return config_; }
  int64_t n_ctx() const { return config_.n_ctx; }
  int64_t used() const { return static_cast<int64_t>(tokens_.size()); }
  // The token held by each filled cell, cell 0 first.
  std::span<const int32_t> tokens() const { return tokens_; }
  // kOutOfRange "context full: N tokens of M" when n_tokens more do not fit.
  Status reserve(int64_t n_tokens) const;
  // Marks the next tokens.size() cells filled with these tokens (after reserve succeeded).
  void commit(std::span<const int32_t> tokens);

  // Per-sequence operations.
  void clear() { tokens_.clear(); }
  // Keeps the first n cells (n <= used()), forgetting the rest.
  void keep(int64_t n);
  // Makes this cache hold a copy of the first n cells of `other` (same config; n <= other.used()).
  void copy_prefix_from(const KvCache& other, int64_t n);
  // Drops cells [first, first + n) and moves the later ones down by n (bytes as they are:
  // the caller re-rotates the moved keys, see Model::shift).
  void remove(int64_t first, int64_t n);

  // Cells [first, first + n) of a layer: [head_dim, n_head_kv, n] of the cache type.
  TensorView k(int64_t layer, int64_t first, int64_t n) const;
  TensorView v(int64_t layer, int64_t first, int64_t n) const;

 private:
  explicit KvCache(const KvCacheConfig& config) : config_(config) {}
  static Result<KvCache> create(const KvCacheConfig& config, const std::function<Device&(int64_t)>& device_of);
  TensorView view(int64_t layer, Buffer& buf, int64_t head_dim, int64_t first, int64_t n) const;
  size_t cell_bytes(int64_t layer, int64_t head_dim) const;

  KvCacheConfig config_;
  std::vector<int32_t> tokens_;
  std::vector<std::unique_ptr<Buffer>> k_;  // one buffer per layer
  std::vector<std::unique_ptr<Buffer>> v_;
};

}  // namespace paddock
