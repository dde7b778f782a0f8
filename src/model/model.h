// A loaded model: hyperparameters, weights bound in place in the mapped GGUF file, and a
// forward pass that appends a batch of one sequence's tokens to a KV cache and returns
// logits. Immutable after load; one KvCache per sequence holds all the mutable state.
//   PADDOCK_ASSIGN(auto model, load_model(*file, *backend));    // registry.h
//   PADDOCK_ASSIGN(KvCache kv, KvCache::create(model->kv_config(1024, DType::kF16)));
//   PADDOCK_ASSIGN(std::vector<float> logits, model->forward(*backend, kv, ids, pos, false));
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"
#include "kv/kv_cache.h"
#include "model/blocks.h"
#include "model/hparams.h"

namespace paddock {

class Model {
 public:
  virtual ~Model() = default;
  const HParams& hparams() const { return hp_; }
  KvCacheConfig kv_config(int64_t n_ctx, DType type) const;

  // Evaluates `tokens` at `positions` (which must continue the cache: kv.used(), +1, ...).
  // Returns the last token's logits [n_vocab], or all of them [n_vocab * n_tokens] token
  // after token when all_logits. Errors: bad token ids or positions, context full.
  Result<std::vector<float>> forward(Backend& be, KvCache& kv, std::span<const int32_t> tokens,
                                     std::span<const int32_t> positions, bool all_logits) const;

 protected:
  explicit Model(HParams hp) : hp_(std::move(hp)) {}
  // The architecture's graph. Inputs are validated; returns logits [n_vocab, 1 or n_tokens].
  virtual TensorView compute(ForwardContext& c, std::span<const int32_t> tokens, bool all_logits) const = 0;

  HParams hp_;
};

}  // namespace paddock
