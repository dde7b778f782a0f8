#include "kv/kv_cache.h"

#include <cstring>
#include <string>

#include "base/check.h"
#include "base/checked_math.h"
#include "quant/quant.h"

namespace paddock {

namespace {

bool is_kv_type(DType t) {
  return t == DType::kF16 || t == DType::kF32 || t == DType::kQ8_0 || t == DType::kQ4_0;
}

bool is_block_type(DType t) { return t == DType::kQ8_0 || t == DType::kQ4_0; }

// Bytes of one layer's K (or V) buffer, or false on overflow.
bool layer_bytes(const KvCacheConfig& c, int64_t head_dim, uint64_t* out) {
  const auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  const uint64_t row = dtype_row_bytes(c.type, head_dim);
  return checked_mul(u(c.n_ctx), u(c.n_head_kv), out) && checked_mul(*out, row, out) &&
         *out <= (uint64_t{1} << 40);
}

}  // namespace

bool kv_type_fits(DType type, int64_t head_dim_k, int64_t head_dim_v) {
  if (!is_kv_type(type)) return false;
  const int64_t block = dtype_info(type).block_size;
  return head_dim_k % block == 0 && head_dim_v % block == 0;
}

uint64_t kv_cache_bytes(const KvCacheConfig& c) {
  if (c.n_ctx <= 0 || c.n_layer <= 0 || c.n_head_kv <= 0 ||
      !kv_type_fits(c.type, c.head_dim_k, c.head_dim_v)) {
    return 0;
  }
  uint64_t k = 0;
  uint64_t v = 0;
  if (!layer_bytes(c, c.head_dim_k, &k) || !layer_bytes(c, c.head_dim_v, &v)) return 0;
  return static_cast<uint64_t>(c.n_layer) * (k + v);
}

Result<KvCache> KvCache::create(const KvCacheConfig& c) {
  if (c.n_ctx <= 0 || c.n_layer <= 0 || c.n_head_kv <= 0 || c.head_dim_k <= 0 || c.head_dim_v <= 0) {
    return invalid_argument("KV cache: expected positive sizes, found n_ctx " + std::to_string(c.n_ctx) +
                            ", n_layer " + std::to_string(c.n_layer) + ", n_head_kv " +
                            std::to_string(c.n_head_kv) + ", head_dim " + std::to_string(c.head_dim_k) + "/" +
                            std::to_string(c.head_dim_v));
  }
  if (!is_kv_type(c.type)) {
    return unsupported("KV cache: expected type F16, F32, Q8_0 or Q4_0, found " +
                       std::string(dtype_name(c.type)));
  }
  if (!kv_type_fits(c.type, c.head_dim_k, c.head_dim_v)) {
    return unsupported("KV cache: type " + std::string(dtype_name(c.type)) +
                       " needs head dims that are multiples of " +
                       std::to_string(dtype_info(c.type).block_size) + ", found " +
                       std::to_string(c.head_dim_k) + "/" + std::to_string(c.head_dim_v));
  }
  uint64_t k_bytes = 0;
  uint64_t v_bytes = 0;
  if (!layer_bytes(c, c.head_dim_k, &k_bytes) || !layer_bytes(c, c.head_dim_v, &v_bytes)) {
    return error(Code::kResourceExhausted, "KV cache: size overflows for n_ctx " + std::to_string(c.n_ctx));
  }
  KvCache kv(c);
  kv.k_.resize(static_cast<size_t>(c.n_layer));
  kv.v_.resize(static_cast<size_t>(c.n_layer));
  for (int64_t l = 0; l < c.n_layer; ++l) {
    kv.k_[l].assign(k_bytes, 0);
    kv.v_[l].assign(v_bytes, 0);
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

size_t KvCache::cell_bytes(int64_t head_dim) const {
  return dtype_row_bytes(config_.type, head_dim) * static_cast<size_t>(config_.n_head_kv);
}

void KvCache::copy_prefix_from(const KvCache& other, int64_t n) {
  const KvCacheConfig& o = other.config_;
  PADDOCK_CHECK(o.n_ctx == config_.n_ctx && o.n_layer == config_.n_layer &&
                o.n_head_kv == config_.n_head_kv && o.head_dim_k == config_.head_dim_k &&
                o.head_dim_v == config_.head_dim_v && o.type == config_.type);
  PADDOCK_CHECK(n >= 0 && n <= other.used());
  if (&other == this) {
    keep(n);
    return;
  }
  const size_t kb = cell_bytes(config_.head_dim_k) * static_cast<size_t>(n);
  const size_t vb = cell_bytes(config_.head_dim_v) * static_cast<size_t>(n);
  for (size_t l = 0; l < k_.size(); ++l) {
    std::memcpy(k_[l].data(), other.k_[l].data(), kb);
    std::memcpy(v_[l].data(), other.v_[l].data(), vb);
  }
  tokens_.assign(other.tokens_.begin(), other.tokens_.begin() + n);
}

void KvCache::remove(int64_t first, int64_t n) {
  PADDOCK_CHECK(first >= 0 && n >= 0 && first + n <= used());
  const int64_t moved = used() - first - n;
  const size_t kc = cell_bytes(config_.head_dim_k);
  const size_t vc = cell_bytes(config_.head_dim_v);
  for (size_t l = 0; l < k_.size(); ++l) {
    std::memmove(k_[l].data() + first * kc, k_[l].data() + (first + n) * kc, static_cast<size_t>(moved) * kc);
    std::memmove(v_[l].data() + first * vc, v_[l].data() + (first + n) * vc, static_cast<size_t>(moved) * vc);
  }
  tokens_.erase(tokens_.begin() + first, tokens_.begin() + first + n);
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

void KvCache::write(Backend& be, const TensorView& src, const TensorView& dst) const {
  PADDOCK_CHECK(src.type == DType::kF32 && src.ne[0] == dst.ne[0] && src.ne[1] == dst.ne[1] &&
                src.ne[2] == dst.ne[2]);
  if (!is_block_type(config_.type)) {
    be.copy(src, dst);
    return;
  }
  // The backends' copy writes float types only; block rows use the reference quantizer,
  // as llama.cpp's CPU backend does for its quantized caches.
  PADDOCK_CHECK(src.nb[0] == sizeof(float));
  const QuantOps* q = quant_ops(config_.type);
  PADDOCK_CHECK(q != nullptr && q->quantize_row != nullptr);
  for (int64_t i2 = 0; i2 < src.ne[2]; ++i2) {
    for (int64_t i1 = 0; i1 < src.ne[1]; ++i1) {
      q->quantize_row(reinterpret_cast<const float*>(src.row(i1, i2)), dst.row(i1, i2), src.ne[0]);
    }
  }
}

void KvCache::write_k(Backend& be, int64_t layer, int64_t first, const TensorView& src) {
  write(be, src, k(layer, first, src.ne[2]));
}

void KvCache::write_v(Backend& be, int64_t layer, int64_t first, const TensorView& src) {
  write(be, src, v(layer, first, src.ne[2]));
}

void KvCache::read_k(int64_t layer, int64_t first, int64_t n, std::span<float> dst) {
  const int64_t d = config_.head_dim_k;
  PADDOCK_CHECK(static_cast<int64_t>(dst.size()) == d * config_.n_head_kv * n);
  const TensorView src = k(layer, first, n);
  const QuantOps* q = quant_ops(config_.type);
  PADDOCK_CHECK(q != nullptr && q->dequantize_row != nullptr);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t h = 0; h < config_.n_head_kv; ++h) {
      q->dequantize_row(src.row(h, j), &dst[static_cast<size_t>((j * config_.n_head_kv + h) * d)], d);
    }
  }
}

}  // namespace paddock
