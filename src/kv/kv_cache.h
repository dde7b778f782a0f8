// The KV cache of one sequence: per layer, K [head_dim_k, n_head_kv, cells] and V
// [head_dim_v, n_head_kv, cells] (n_head_kv may differ between layers) in F16 (default), F32,
// Q8_0 or Q4_0 (llama.cpp's block layouts; the quantized types need head dims that are whole
// blocks). A layer holds every position (cell i = position i, n_ctx cells) or, for a
// sliding-window layer, a ring of window + n_batch - 1 cells tagged with the position each
// holds: a pass's tokens overwrite cells that no later token can see, so a windowed layer
// costs its window, not n_ctx. tokens() remembers the sequence's tokens, so a later request
// can reuse a shared prefix. A batch is one KvCache per sequence; the sequences of a group
// (create_group) hold disjoint cells of shared per-layer buffers, so one attention call per
// layer can serve them all.
// Each layer's K and V are buffers on the device that computes the layer; the cache moves
// bytes only through them. A forward pass reserves room for its tokens, records copies of
// their K/V rows into the cells pass_cells() names, attends over the cells it reads (with
// their positions for a ring), and commits the tokens when the pass succeeded.
//   PADDOCK_ASSIGN(KvCache kv, KvCache::create({.n_ctx = 1024, .n_head_kv = {8, 8}, ...}, be->device()));
//   PADDOCK_TRY(kv.reserve(n_tokens));  PassCells c = kv.pass_cells(layer, n_tokens);  ... kv.commit(tokens);
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
  DType type = DType::kF16;     // is_kv_cache_type: F16, F32, Q8_0 or Q4_0
  std::vector<int32_t> window;  // empty, or per layer: > 0 a sliding window of that many positions
  int64_t n_batch = 0;          // the most tokens one pass adds (0: n_ctx); sizes the rings

  int64_t n_layer() const { return static_cast<int64_t>(n_head_kv.size()); }
  int32_t window_of(int64_t layer) const { return window.empty() ? 0 : window[static_cast<size_t>(layer)]; }
  // The cells a layer holds: n_ctx, or a ring of window + n_batch - 1 when that is fewer.
  int64_t n_cells(int64_t layer) const;
  bool is_ring(int64_t layer) const { return n_cells(layer) < n_ctx; }
  bool operator==(const KvCacheConfig&) const = default;
};

// Whether a cache of `type` can hold heads of these sizes (block types need whole blocks).
bool kv_type_fits(DType type, int64_t head_dim_k, int64_t head_dim_v);
// Bytes a cache with this config holds (0 when the config is invalid).
uint64_t kv_cache_bytes(const KvCacheConfig& config);

// Consecutive cells [cell, cell + n).
struct CellRun {
  int64_t cell;
  int64_t n;
};

// What a pass of n tokens does in one layer: writes their K/V rows to `write` (in token
// order) and attends over cells [0, n_read), which hold `positions` (AttnParams::cells: -1
// for an empty cell; an empty vector: cell = position).
struct PassCells {
  std::vector<CellRun> write;
  int64_t n_read = 0;
  std::vector<int32_t> positions;
};

// Keys whose position a remove() changed: cells [first_cell, first_cell + delta.size()) of a
// layer, each to be re-rotated by its delta (0: unchanged).
struct MovedKeys {
  int64_t first_cell = 0;
  std::vector<int32_t> delta;
};

class KvCache {
 public:
  // Fails on non-positive sizes, an unsupported type (or one the head dims do not fit), a
  // size that overflows, or a device out of memory. Cells start zeroed. Each layer's cells
  // live on the device of the backend that computes the layer (Backend::for_layer), or all
  // on `device`.
  static Result<KvCache> create(const KvCacheConfig& config, Backend& backend);
  static Result<KvCache> create(const KvCacheConfig& config, Device& device);
  // n_seq caches of one config whose cells share per-layer buffers (sequence i holds cells
  // [i * n_cells, (i + 1) * n_cells) of each): a pass over several of them attends in one call
  // (group_k). Separate caches instead when a shared layer buffer would pass max_bytes.
  static constexpr uint64_t kMaxGroupBytes = uint64_t{1} << 30;  // well within what GPU kernels address
  static Result<std::vector<KvCache>> create_group(const KvCacheConfig& config, int64_t n_seq,
                                                   Backend& backend, uint64_t max_bytes = kMaxGroupBytes);
  static Result<std::vector<KvCache>> create_group(const KvCacheConfig& config, int64_t n_seq, Device& device,
                                                   uint64_t max_bytes = kMaxGroupBytes);

  // Moves only: a copy would share cells with its original.
  KvCache(KvCache&&) = default;
  KvCache& operator=(KvCache&&) = default;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  const KvCacheConfig& config() const { return config_; }
  int64_t n_ctx() const { return config_.n_ctx; }
  // Positions 0..used()-1 were evaluated (a ring keeps only the last ones' cells).
  int64_t used() const { return static_cast<int64_t>(tokens_.size()); }
  // The sequence's tokens, position 0 first.
  std::span<const int32_t> tokens() const { return tokens_; }
  // kOutOfRange "context full: N tokens of M" when n_tokens more do not fit; kInvalidArgument
  // when a pass of n_tokens exceeds the n_batch the rings were sized for.
  Status reserve(int64_t n_tokens) const;
  // Where the next n_tokens (positions used() ..) go in a layer and what attention reads
  // there (after reserve(n_tokens) succeeded; commit() places them the same way).
  PassCells pass_cells(int64_t layer, int64_t n_tokens) const;
  // Marks the next tokens.size() positions evaluated with these tokens (after reserve).
  void commit(std::span<const int32_t> tokens);

  // Per-sequence operations.
  void clear();
  // Keeps positions 0..n-1 (n <= used()), forgetting the rest, and returns n; or returns 0
  // having kept nothing when a ring no longer holds the cells position n would see.
  int64_t keep(int64_t n);
  // Drops positions [first, first + n) and renumbers the later ones down by n: a full layer
  // moves their cells down (bytes as they are), a ring relabels its cells. Returns, per
  // layer, the keys the caller must re-rotate (see Model::shift).
  std::vector<MovedKeys> remove(int64_t first, int64_t n);

  // Cells [first, first + n) of a layer: [head_dim, n_head_kv, n] of the cache type.
  TensorView k(int64_t layer, int64_t first, int64_t n) const;
  TensorView v(int64_t layer, int64_t first, int64_t n) const;

  // Whether this cache and `other` are sequences of one group (their cells share buffers).
  bool same_group(const KvCache& other) const { return k_.front() == other.k_.front(); }
  // A layer's cells of every sequence of the group: [head_dim, n_head_kv, n_seq * n_cells];
  // this sequence's cell c is the group's cell group_cell(layer) + c.
  TensorView group_k(int64_t layer) const;
  TensorView group_v(int64_t layer) const;
  int64_t group_cell(int64_t layer) const { return slot_ * config_.n_cells(layer); }

 private:
  // The cells of the windowed layers with one window: the position each holds (-1 empty),
  // and where the search for free cells starts.
  struct Ring {
    int32_t window = 0;
    std::vector<int32_t> pos;
    int64_t cursor = 0;
  };

  explicit KvCache(const KvCacheConfig& config) : config_(config) {}
  using DeviceOf = std::function<Device&(int64_t)>;  // the device of a layer's cells
  static Result<std::vector<KvCache>> create_group(const KvCacheConfig& config, int64_t n_seq,
                                                   const DeviceOf& device_of, uint64_t max_bytes);
  static Result<std::vector<KvCache>> create(const KvCacheConfig& config, int64_t n_seq,
                                             const DeviceOf& device_of);
  TensorView group_view(int64_t layer, Buffer& buf, int64_t head_dim) const;
  TensorView view(int64_t layer, Buffer& buf, int64_t head_dim, int64_t first, int64_t n) const;
  size_t cell_bytes(int64_t layer, int64_t head_dim) const;
  // The cells the next n positions take in a ring: free ones (empty, or holding a position no
  // later token sees) from the cursor on.
  std::vector<int64_t> ring_slots(const Ring& r, int64_t n) const;

  KvCacheConfig config_;
  std::vector<int32_t> tokens_;
  std::vector<Ring> rings_;
  std::vector<int32_t> ring_of_;  // per layer: its ring in rings_, or -1 (every position)
  std::vector<std::shared_ptr<Buffer>> k_;  // one buffer per layer, shared by the group
  std::vector<std::shared_ptr<Buffer>> v_;
  int64_t slot_ = 0;     // this sequence's index in its group
  int64_t n_slots_ = 1;  // the group's sequences
};

}  // namespace paddock
