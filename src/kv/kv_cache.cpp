#include "kv/kv_cache.h"

#include <string>

#include "base/check.h"
#include "base/checked_math.h"

namespace paddock {

Result<KvCache> KvCache::create(const KvCacheConfig& c) {
  if (c.n_ctx <= 0 || c.n_layer <= 0 || c.n_head_kv <= 0 || c.head_dim_k <= 0 || c.head_dim_v <= 0) {
    return invalid_argument("KV cache: expected positive sizes, found n_ctx " + std::to_string(c.n_ctx) +
                            ", n_layer " + std::to_string(c.n_layer) + ", n_head_kv " +
                            std::to_string(c.n_head_kv) + ", head_dim " + std::to_string(c.head_dim_k) + "/" +
                            std::to_string(c.head_dim_v));
  }
  if (c.type != DType::kF16 && c.type != DType::kF32) {
    return unsupported("KV cache: expected type F16 or F32, found " + std::string(dtype_name(c.type)));
  }
  const uint64_t elem = dtype_info(c.type).type_size;
  uint64_t k_bytes = 0;
  uint64_t v_bytes = 0;
  const auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  if (!checked_mul(u(c.n_ctx), u(c.n_head_kv), &k_bytes) || !checked_mul(k_bytes, elem, &k_bytes) ||
      !checked_mul(k_bytes, u(c.head_dim_v), &v_bytes) || !checked_mul(k_bytes, u(c.head_dim_k), &k_bytes) ||
      k_bytes > (uint64_t{1} << 40) || v_bytes > (uint64_t{1} << 40)) {
    return error(Code::kResourceExhausted, "KV cache: size overflows for n_ctx " + std::to_string(c.n_ctx));
  }
  KvCache kv(c);
  kv.k_.resize(static_cast<size_t>(c.n_layer));
  kv.v_.resize(static_cast<size_t>(c.n_layer));
  for (int64_t l = 0; l < c.n_layer; ++l) {
    kv.k_[l].assign(k_bytes, 0);
    kv.v_[l].assign(v_bytes, 0);
  }
  return kv;
}

Status KvCache::reserve(int64_t n_tokens) const {
  if (n_tokens < 0 || n_tokens > config_.n_ctx - used_) {
    return error(Code::kOutOfRange, "context full: " + std::to_string(used_ + n_tokens) + " tokens of " +
                                        std::to_string(config_.n_ctx));
  }
  return Status::ok();
}

void KvCache::commit(int64_t n_tokens) {
  PADDOCK_CHECK(n_tokens >= 0 && n_tokens <= config_.n_ctx - used_);
  used_ += n_tokens;
}

TensorView KvCache::view(std::vector<uint8_t>& buf, int64_t head_dim, int64_t first, int64_t n) const {
  PADDOCK_CHECK(first >= 0 && n >= 0 && first + n <= config_.n_ctx);
  TensorView all =
      TensorView::contiguous(buf.data(), config_.type, {head_dim, config_.n_head_kv, config_.n_ctx});
  all.data = all.row(0, first);
  all.ne[2] = n;
  return all;
}

TensorView KvCache::k(int64_t layer, int64_t first, int64_t n) {
  PADDOCK_CHECK(layer >= 0 && layer < config_.n_layer);
  return view(k_[layer], config_.head_dim_k, first, n);
}

TensorView KvCache::v(int64_t layer, int64_t first, int64_t n) {
  PADDOCK_CHECK(layer >= 0 && layer < config_.n_layer);
  return view(v_[layer], config_.head_dim_v, first, n);
}

}  // namespace paddock
