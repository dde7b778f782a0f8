#include "model/model.h"

#include <string>

namespace paddock {

KvCacheConfig Model::kv_config(int64_t n_ctx, DType type) const {
  return KvCacheConfig{.n_ctx = n_ctx,
                       .n_layer = hp_.n_layer,
                       .n_head_kv = hp_.n_head_kv,
                       .head_dim_k = hp_.head_dim_k,
                       .head_dim_v = hp_.head_dim_v,
                       .type = type};
}

Result<std::vector<float>> Model::forward(Backend& be, KvCache& kv, std::span<const int32_t> tokens,
                                          std::span<const int32_t> positions, bool all_logits) const {
  if (tokens.empty()) return invalid_argument("forward: expected at least one token, found none");
  if (positions.size() != tokens.size()) {
    return invalid_argument("forward: expected one position per token (" + std::to_string(tokens.size()) +
                            "), found " + std::to_string(positions.size()));
  }
  const KvCacheConfig& kc = kv.config();
  if (kc.n_layer != hp_.n_layer || kc.n_head_kv != hp_.n_head_kv || kc.head_dim_k != hp_.head_dim_k ||
      kc.head_dim_v != hp_.head_dim_v) {
    return invalid_argument("forward: the KV cache was made for another model shape");
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= hp_.n_vocab) {
      return invalid_argument("token id " + std::to_string(tokens[i]) + " out of range: the vocabulary has " +
                              std::to_string(hp_.n_vocab) + " tokens");
    }
    // One sequence: cell = position, so positions must continue the cache.
    if (positions[i] != kv.used() + static_cast<int64_t>(i)) {
      return invalid_argument("position " + std::to_string(positions[i]) + " at batch index " +
                              std::to_string(i) + ": expected " +
                              std::to_string(kv.used() + static_cast<int64_t>(i)));
    }
  }
  PADDOCK_TRY(kv.reserve(static_cast<int64_t>(tokens.size())));

  Arena arena;
  ForwardContext c{.be = be,
                   .kv = kv,
                   .arena = arena,
                   .hp = hp_,
                   .pos = positions,
                   .kv_first = kv.used(),
                   .rope = RopeParams{}};
  const TensorView logits = compute(c, tokens, all_logits);  // [n_vocab, 1 or n_tokens]
  kv.commit(static_cast<int64_t>(tokens.size()));
  const float* p = static_cast<const float*>(logits.data);
  return std::vector<float>(p, p + logits.n_elements());
}

}  // namespace paddock
