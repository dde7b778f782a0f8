#include "kv/kv_cache.h"

#include <algorithm>
#include <string>

#include "base/check.h"
#include "base/checked_math.h"

namespace paddock {

namespace {

// Bytes of one layer's K (or V) buffer, or false on overflow.
bool layer_bytes(const KvCacheConfig& c, int64_t layer, int64_t head_dim, uint64_t* out) {
  const auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  const uint64_t row = dtype_row_bytes(c.type, head_dim);
  return checked_mul(u(c.n_cells(layer)), u(c.n_head_kv[static_cast<size_t>(layer)]), out) &&
         checked_mul(*out, row, out) && *out <= (uint64_t{1} << 40);
}

bool positive_sizes(const KvCacheConfig& c) {
  return c.n_ctx > 0 && c.n_layer() > 0 && c.head_dim_k > 0 && c.head_dim_v > 0 && c.n_batch >= 0 &&
         std::all_of(c.n_head_kv.begin(), c.n_head_kv.end(), [](int64_t n) { return n > 0; }) &&
         (c.window.empty() || (c.window.size() == c.n_head_kv.size() &&
                               std::all_of(c.window.begin(), c.window.end(), [](int32_t w) { return w >= 0; })));
}

}  // namespace

int64_t KvCacheConfig::n_cells(int64_t layer) const {
  const int64_t w = window_of(layer);
  const int64_t batch = n_batch > 0 ? std::min(n_batch, n_ctx) : n_ctx;
  // A pass of `batch` tokens needs the w - 1 positions before it besides its own.
  return w > 0 ? std::min(n_ctx, w + batch - 1) : n_ctx;
}

bool kv_type_fits(DType type, int64_t head_dim_k, int64_t head_dim_v) {
  if (!is_kv_cache_type(type)) return false;
  const int64_t block = dtype_info(type).block_size;
  return head_dim_k % block == 0 && head_dim_v % block == 0;
}

uint64_t kv_cache_bytes(const KvCacheConfig& c) {
  if (!positive_sizes(c) || !kv_type_fits(c.type, c.head_dim_k, c.head_dim_v)) return 0;
  uint64_t total = 0;
  for (int64_t l = 0; l < c.n_layer(); ++l) {
    uint64_t k = 0;
    uint64_t v = 0;
    if (!layer_bytes(c, l, c.head_dim_k, &k) || !layer_bytes(c, l, c.head_dim_v, &v)) return 0;
    total += k + v;
  }
  return total;
}

Result<KvCache> KvCache::create(const KvCacheConfig& c, Device& device) {
  PADDOCK_ASSIGN(std::vector<KvCache> one, create_group(c, 1, device));
  return std::move(one.front());
}

Result<KvCache> KvCache::create(const KvCacheConfig& c, Backend& backend) {
  PADDOCK_ASSIGN(std::vector<KvCache> one, create_group(c, 1, backend));
  return std::move(one.front());
}

Result<std::vector<KvCache>> KvCache::create_group(const KvCacheConfig& c, int64_t n_seq, Backend& backend,
                                                   uint64_t max_bytes) {
  return create_group(
      c, n_seq, [&](int64_t layer) -> Device& { return backend.for_layer(layer).device(); }, max_bytes);
}

Result<std::vector<KvCache>> KvCache::create_group(const KvCacheConfig& c, int64_t n_seq, Device& device,
                                                   uint64_t max_bytes) {
  return create_group(
      c, n_seq, [&](int64_t) -> Device& { return device; }, max_bytes);
}

Result<std::vector<KvCache>> KvCache::create_group(const KvCacheConfig& c, int64_t n_seq,
                                                   const DeviceOf& device_of, uint64_t max_bytes) {
  if (n_seq < 1)
    return invalid_argument("KV cache: expected at least 1 sequence, found " + std::to_string(n_seq));
  bool fits = true;  // every shared layer buffer within max_bytes (create reports a bad config)
  const bool valid = positive_sizes(c) && kv_type_fits(c.type, c.head_dim_k, c.head_dim_v);
  for (int64_t l = 0; l < c.n_layer() && valid; ++l) {
    uint64_t k = 0;
    uint64_t v = 0;
    fits = fits && layer_bytes(c, l, c.head_dim_k, &k) && layer_bytes(c, l, c.head_dim_v, &v) &&
           std::max(k, v) <= max_bytes / static_cast<uint64_t>(n_seq);
  }
  if (fits) return create(c, n_seq, device_of);
  std::vector<KvCache> out;
  for (int64_t i = 0; i < n_seq; ++i) {
    PADDOCK_ASSIGN(std::vector<KvCache> one, create(c, 1, device_of));
    out.push_back(std::move(one.front()));
  }
  return out;
}

Result<std::vector<KvCache>> KvCache::create(const KvCacheConfig& c, int64_t n_seq,
                                             const DeviceOf& device_of) {
  if (!positive_sizes(c)) {
    std::string heads;
    for (int64_t n : c.n_head_kv) heads += (heads.empty() ? "" : ",") + std::to_string(n);
    std::string windows;
    for (int32_t w : c.window) windows += (windows.empty() ? "" : ",") + std::to_string(w);
    return invalid_argument("KV cache: expected positive sizes, found n_ctx " + std::to_string(c.n_ctx) +
                            ", n_layer " + std::to_string(c.n_layer()) + ", n_head_kv [" + heads +
                            "], head_dim " + std::to_string(c.head_dim_k) + "/" + std::to_string(c.head_dim_v) +
                            (windows.empty() ? "" : ", window [" + windows + "]") +
                            (c.n_batch < 0 ? ", n_batch " + std::to_string(c.n_batch) : ""));
  }
  if (!is_kv_cache_type(c.type)) {
    return unsupported("KV cache: expected type F16, F32, Q8_0 or Q4_0, found " +
                       std::string(dtype_name(c.type)));
  }
  if (!kv_type_fits(c.type, c.head_dim_k, c.head_dim_v)) {
    return unsupported("KV cache: type " + std::string(dtype_name(c.type)) +
                       " needs head dims that are multiples of " +
                       std::to_string(dtype_info(c.type).block_size) + ", found " +
                       std::to_string(c.head_dim_k) + "/" + std::to_string(c.head_dim_v));
  }
  KvCache kv(c);  // the group's buffers and ring layout
  for (int64_t l = 0; l < c.n_layer(); ++l) {
    uint64_t k_bytes = 0;
    uint64_t v_bytes = 0;
    if (!layer_bytes(c, l, c.head_dim_k, &k_bytes) || !layer_bytes(c, l, c.head_dim_v, &v_bytes) ||
        !checked_mul(k_bytes, static_cast<uint64_t>(n_seq), &k_bytes) ||
        !checked_mul(v_bytes, static_cast<uint64_t>(n_seq), &v_bytes)) {
      return error(Code::kResourceExhausted, "KV cache: size overflows for n_ctx " + std::to_string(c.n_ctx));
    }
    // Zeroed: attention kernels may read a tile past the filled cells (and mask them out),
    // which must not meet NaN bit patterns.
    Device& device = device_of(l);
    PADDOCK_ASSIGN(std::unique_ptr<Buffer> k, device.alloc(k_bytes));
    PADDOCK_ASSIGN(std::unique_ptr<Buffer> v, device.alloc(v_bytes));
    k->clear();
    v->clear();
    kv.k_.push_back(std::move(k));
    kv.v_.push_back(std::move(v));
    // Layers with one window share the tags of one ring.
    int32_t ring = -1;
    if (c.is_ring(l)) {
      for (size_t r = 0; r < kv.rings_.size() && ring < 0; ++r) {
        if (kv.rings_[r].window == c.window_of(l)) ring = static_cast<int32_t>(r);
      }
      if (ring < 0) {
        ring = static_cast<int32_t>(kv.rings_.size());
        kv.rings_.push_back(Ring{.window = c.window_of(l), .pos = std::vector<int32_t>(c.n_cells(l), -1)});
      }
    }
    kv.ring_of_.push_back(ring);
  }
  std::vector<KvCache> group;
  for (int64_t i = 0; i < n_seq; ++i) {
    KvCache& seq = group.emplace_back(KvCache(c));
    seq.rings_ = kv.rings_;
    seq.ring_of_ = kv.ring_of_;
    seq.k_ = kv.k_;
    seq.v_ = kv.v_;
    seq.slot_ = i;
    seq.n_slots_ = n_seq;
    seq.tokens_.reserve(static_cast<size_t>(c.n_ctx));
  }
  return group;
}

Status KvCache::reserve(int64_t n_tokens) const {
  if (n_tokens < 0 || n_tokens > config_.n_ctx - used()) {
    return error(Code::kOutOfRange, "context full: " + std::to_string(used() + n_tokens) + " tokens of " +
                                        std::to_string(config_.n_ctx));
  }
  if (!rings_.empty() && n_tokens > config_.n_batch) {
    return invalid_argument("KV cache: " + std::to_string(n_tokens) + " tokens in one pass, more than the " +
                            std::to_string(config_.n_batch) + " its sliding-window layers were sized for");
  }
  return Status::ok();
}

std::vector<int64_t> KvCache::ring_slots(const Ring& r, int64_t n) const {
  const auto cells = static_cast<int64_t>(r.pos.size());
  std::vector<int64_t> out;
  for (int64_t i = 0; i < cells && static_cast<int64_t>(out.size()) < n; ++i) {
    const int64_t c = (r.cursor + i) % cells;
    const int32_t p = r.pos[static_cast<size_t>(c)];
    if (p < 0 || p <= used() - r.window) out.push_back(c);  // position used() sees > used() - window
  }
  // At most window - 1 cells hold positions still seen, and cells >= window - 1 + n_batch.
  PADDOCK_CHECK(static_cast<int64_t>(out.size()) == n);
  return out;
}

PassCells KvCache::pass_cells(int64_t layer, int64_t n_tokens) const {
  PADDOCK_CHECK(layer >= 0 && layer < config_.n_layer() && n_tokens >= 0);
  const int32_t ring = ring_of_[static_cast<size_t>(layer)];
  PassCells out;
  if (ring < 0) {
    out.write.push_back({used(), n_tokens});
    out.n_read = used() + n_tokens;
    return out;
  }
  const Ring& r = rings_[static_cast<size_t>(ring)];
  out.positions = r.pos;
  out.n_read = static_cast<int64_t>(r.pos.size());
  const std::vector<int64_t> slots = ring_slots(r, n_tokens);
  for (size_t i = 0; i < slots.size(); ++i) {
    out.positions[static_cast<size_t>(slots[i])] = static_cast<int32_t>(used() + static_cast<int64_t>(i));
    if (!out.write.empty() && out.write.back().cell + out.write.back().n == slots[i]) {
      ++out.write.back().n;
    } else {
      out.write.push_back({slots[i], 1});
    }
  }
  return out;
}

void KvCache::commit(std::span<const int32_t> tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  PADDOCK_CHECK(n <= config_.n_ctx - used());
  for (Ring& r : rings_) {
    const std::vector<int64_t> slots = ring_slots(r, n);
    for (size_t i = 0; i < slots.size(); ++i) {
      r.pos[static_cast<size_t>(slots[i])] = static_cast<int32_t>(used() + static_cast<int64_t>(i));
    }
    if (!slots.empty()) r.cursor = (slots.back() + 1) % static_cast<int64_t>(r.pos.size());
  }
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
}

void KvCache::clear() { keep(0); }

int64_t KvCache::keep(int64_t n) {
  PADDOCK_CHECK(n >= 0 && n <= used());
  if (n == used()) return n;
  for (const Ring& r : rings_) {
    // Position n sees [n - window + 1, n): the ring must still hold all of those.
    std::vector<bool> held(static_cast<size_t>(n), false);
    for (int32_t p : r.pos) {
      if (p >= 0 && p < n) held[static_cast<size_t>(p)] = true;
    }
    for (int64_t p = std::max<int64_t>(0, n - r.window + 1); p < n; ++p) {
      if (!held[static_cast<size_t>(p)]) {
        n = 0;
        break;
      }
    }
  }
  for (Ring& r : rings_) {
    for (int32_t& p : r.pos) {
      if (p >= n) p = -1;
    }
  }
  tokens_.resize(static_cast<size_t>(n));
  return n;
}

size_t KvCache::cell_bytes(int64_t layer, int64_t head_dim) const {
  return dtype_row_bytes(config_.type, head_dim) * static_cast<size_t>(config_.n_head_kv[static_cast<size_t>(layer)]);
}

std::vector<MovedKeys> KvCache::remove(int64_t first, int64_t n) {
  PADDOCK_CHECK(first >= 0 && n >= 0 && first + n <= used());
  const int64_t moved = used() - first - n;
  const auto at = [](int64_t cell, size_t bytes) { return static_cast<size_t>(cell) * bytes; };
  // A ring's cells keep their bytes: the dropped ones empty, the later ones relabelled.
  std::vector<std::vector<int32_t>> ring_delta(rings_.size());
  for (size_t r = 0; r < rings_.size(); ++r) {
    for (int32_t& p : rings_[r].pos) {
      const bool later = p >= first + n;
      ring_delta[r].push_back(later ? static_cast<int32_t>(-n) : 0);
      if (later) {
        p -= static_cast<int32_t>(n);
      } else if (p >= first) {
        p = -1;
      }
    }
  }
  std::vector<MovedKeys> out;
  for (size_t l = 0; l < k_.size(); ++l) {
    if (ring_of_[l] >= 0) {
      out.push_back({0, ring_delta[static_cast<size_t>(ring_of_[l])]});
      continue;
    }
    const int64_t base = group_cell(static_cast<int64_t>(l));  // this sequence's cells in the buffer
    const size_t kc = cell_bytes(static_cast<int64_t>(l), config_.head_dim_k);
    const size_t vc = cell_bytes(static_cast<int64_t>(l), config_.head_dim_v);
    k_[l]->copy_from(*k_[l], at(base + first + n, kc), at(base + first, kc), at(moved, kc));
    v_[l]->copy_from(*v_[l], at(base + first + n, vc), at(base + first, vc), at(moved, vc));
    out.push_back({first, std::vector<int32_t>(static_cast<size_t>(moved), static_cast<int32_t>(-n))});
  }
  tokens_.erase(tokens_.begin() + first, tokens_.begin() + first + n);
  return out;
}

TensorView KvCache::group_view(int64_t layer, Buffer& buf, int64_t head_dim) const {
  return TensorView::in_buffer(
      buf, 0, config_.type,
      {head_dim, config_.n_head_kv[static_cast<size_t>(layer)], n_slots_ * config_.n_cells(layer)});
}

TensorView KvCache::view(int64_t layer, Buffer& buf, int64_t head_dim, int64_t first, int64_t n) const {
  PADDOCK_CHECK(first >= 0 && n >= 0 && first + n <= config_.n_cells(layer));
  TensorView cells = group_view(layer, buf, head_dim);
  cells = cells.shifted(static_cast<size_t>(group_cell(layer) + first) * cells.nb[2]);
  cells.ne[2] = n;
  return cells;
}

TensorView KvCache::k(int64_t layer, int64_t first, int64_t n) const {
  PADDOCK_CHECK(layer >= 0 && layer < config_.n_layer());
  return view(layer, *k_[layer], config_.head_dim_k, first, n);
}

TensorView KvCache::v(int64_t layer, int64_t first, int64_t n) const {
  PADDOCK_CHECK(layer >= 0 && layer < config_.n_layer());
  return view(layer, *v_[layer], config_.head_dim_v, first, n);
}

TensorView KvCache::group_k(int64_t layer) const {
  PADDOCK_CHECK(layer >= 0 && layer < config_.n_layer());
  return group_view(layer, *k_[layer], config_.head_dim_k);
}

TensorView KvCache::group_v(int64_t layer) const {
  PADDOCK_CHECK(layer >= 0 && layer < config_.n_layer());
  return group_view(layer, *v_[layer], config_.head_dim_v);
}

}  // namespace paddock
