#include "kv/kv_cache.h"

#include <algorithm>
#include <string>

#include "base/check.h"
#include "base/checked_math.h"

namespace paddock {

namespace {

// Bytes of one layer's K (or V) buffer, or false on overflow.
bool layer_bytes(const KvCacheConfig& c, int64_t n_head_kv, int64_t head_dim, uint64_t* out) {
  const auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  const uint64_t row = dtype_row_bytes(c.type, head_dim);
  return checked_mul(u(c.n_ctx), u(n_head_kv), out) && checked_mul(*out, row, out) &&
         *out <= (uint64_t{1} << 40);
}

bool positive_sizes(const KvCacheConfig& c) {
  return c.n_ctx > 0 && c.n_layer() > 0 && c.head_dim_k > 0 && c.head_dim_v > 0 &&
         std::all_of(c.n_head_kv.begin(), c.n_head_kv.end(), [](int64_t n) { return n > 0; });
}

}  // namespace

bool kv_type_fits(DType type, int64_t head_dim_k, int64_t head_dim_v) {
  if (!is_kv_cache_type(type)) return false;
  const int64_t block = dtype_info(type).block_size;
  return head_dim_k % block == 0 && head_dim_v % block == 0;
}

uint64_t kv_cache_bytes(const KvCacheConfig& c) {
  if (!positive_sizes(c) || !kv_type_fits(c.type, c.head_dim_k, c.head_dim_v)) return 0;
  uint64_t total = 0;
  for (int64_t n_head_kv : c.n_head_kv) {
    uint64_t k = 0;
    uint64_t v = 0;
    if (!layer_bytes(c, n_head_kv, c.head_dim_k, &k) || !layer_bytes(c, n_head_kv, c.head_dim_v, &v)) return 0;
    total += k + v;
  }
  return total;
}

Result<KvCache> KvCache::create(const KvCacheConfig& c, Device& device) {
  return create(c, [&](int64_t) -> Device& { return device; });
}

Result<KvCache> KvCache::create(const KvCacheConfig& c, Backend& backend) {
  return create(c, [&](int64_t layer) -> Device& { return backend.for_layer(layer).device(); });
}

Result<KvCache> KvCache::create(const KvCacheConfig& c, const std::function<Device&(int64_t)>& device_of) {
  if (!positive_sizes(c)) {
    std::string heads;
    for (int64_t n : c.n_head_kv) heads += (heads.empty() ? "" : ",") + std::to_string(n);
    return invalid_argument("KV cache: expected positive sizes, found n_ctx " + std::to_string(c.n_ctx) +
                            ", n_layer " + std::to_string(c.n_layer()) + ", n_head_kv [" + heads +
                            "], head_dim " + std::to_string(c.head_dim_k) + "/" + std::to_string(c.head_dim_v));
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
  KvCache kv(c);
  for (int64_t l = 0; l < c.n_layer(); ++l) {
    uint64_t k_bytes = 0;
    uint64_t v_bytes = 0;
    const int64_t n_head_kv = c.n_head_kv[static_cast<size_t>(l)];
    if (!layer_bytes(c, n_head_kv, c.head_dim_k, &k_bytes) || !layer_bytes(c, n_head_kv, c.head_dim_v, &v_bytes)) {
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
  }
  kv.tokens_.reserve(static_cast<size_t>(c.n_ctx));
  return kv;
}

Status KvCache::reserve(int64_t n_tokens) const {
  if (n_tokens < 0 || n_tokens > config_.n_ctx - used()) {
    return error(Code::kOutOfRange, "context full: " + std::to_string(used() + n_tokens) + " tokens of " +
                                        std::to_string(config_.n_ctx));
  }
  return Status::ok();
}

void KvCache::commit(std::span<const int32_t> tokens) {
  PADDOCK_CHECK(static_cast<int64_t>(tokens.size()) <= config_.n_ctx - used());
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
}

void KvCache::keep(int64_t n) {
  PADDOCK_CHECK(n >= 0 && n <= used());
  tokens_.resize(static_cast<size_t>(n));
}

size_t KvCache::cell_bytes(int64_t layer, int64_t head_dim) const {
  return dtype_row_bytes(config_.type, head_dim) * static_cast<size_t>(config_.n_head_kv[static_cast<size_t>(layer)]);
}

void KvCache::copy_prefix_from(const KvCache& other, int64_t n) {
  PADDOCK_CHECK(other.config_ == config_);
  PADDOCK_CHECK(n >= 0 && n <= other.used());
  if (&other == this) {
    keep(n);
    return;
  }
  for (size_t l = 0; l < k_.size(); ++l) {
    const auto il = static_cast<int64_t>(l);
    k_[l]->copy_from(*other.k_[l], 0, 0, cell_bytes(il, config_.head_dim_k) * static_cast<size_t>(n));
    v_[l]->copy_from(*other.v_[l], 0, 0, cell_bytes(il, config_.head_dim_v) * static_cast<size_t>(n));
  }
  tokens_.assign(other.tokens_.begin(), other.tokens_.begin() + n);
}

void KvCache::remove(int64_t first, int64_t n) {
  PADDOCK_CHECK(first >= 0 && n >= 0 && first + n <= used());
  const int64_t moved = used() - first - n;
  const auto at = [](int64_t cell, size_t bytes) { return static_cast<size_t>(cell) * bytes; };
  for (size_t l = 0; l < k_.size(); ++l) {
    const size_t kc = cell_bytes(static_cast<int64_t>(l), config_.head_dim_k);
    const size_t vc = cell_bytes(static_cast<int64_t>(l), config_.head_dim_v);
    k_[l]->copy_from(*k_[l], at(first + n, kc), at(first, kc), at(moved, kc));
    v_[l]->copy_from(*v_[l], at(first + n, vc), at(first, vc), at(moved, vc));
  }
  tokens_.erase(tokens_.begin() + first, tokens_.begin() + first + n);
}

TensorView KvCache::view(int64_t layer, Buffer& buf, int64_t head_dim, int64_t first, int64_t n) const {
  PADDOCK_CHECK(first >= 0 && n >= 0 && first + n <= config_.n_ctx);
  const TensorView all = TensorView::in_buffer(
      buf, 0, config_.type, {head_dim, config_.n_head_kv[static_cast<size_t>(layer)], config_.n_ctx});
  TensorView cells = all.shifted(static_cast<size_t>(first) * all.nb[2]);
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

}  // namespace paddock
