// A loaded model: hyperparameters, weights bound in place in the mapped GGUF file, and a
// forward pass over a batch that mixes sequences: each sequence brings its own KvCache,
// tokens and positions (a prompt chunk of one next to single decode tokens of others). All
// matmuls run over the concatenated tokens (weights are read once per pass); attention runs
// per sequence over that sequence's cache. Immutable after load; the KvCaches hold all the
// mutable state, so sequences join and leave a batch between passes.
//   PADDOCK_ASSIGN(auto model, load_model(*file, *backend));    // registry.h
//   PADDOCK_ASSIGN(KvCache kv, KvCache::create(kv_config(model->hparams(), 1024, DType::kF16),
//   be->device())); PADDOCK_ASSIGN(std::vector<float> logits, model->forward(*backend, kv, ids, pos, false));
//   SeqInput in[2] = {{&kv_a, ids_a, pos_a, Outputs::kLast}, {&kv_b, ids_b, pos_b, Outputs::kLast}};
//   PADDOCK_ASSIGN(auto out, model->forward_batch(*backend, in, Head::kLogits));  // out[s]
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"
#include "kv/kv_cache.h"
#include "model/blocks.h"
#include "model/hparams.h"

namespace paddock {

// Which of a sequence's tokens in a pass produce output rows.
enum class Outputs : uint8_t { kNone, kLast, kAll };

// The KV cache a model with these hparams needs: n_ctx positions of `type`, windowed layers
// as rings for passes of at most n_batch tokens (0: n_ctx).
KvCacheConfig kv_config(const HParams& hp, int64_t n_ctx, DType type, int64_t n_batch = 0);

// One sequence's part of a batch. positions must continue its cache (kv->used(), +1, ...);
// a cache appears at most once per batch.
struct SeqInput {
  KvCache* kv = nullptr;
  std::span<const int32_t> tokens;
  std::span<const int32_t> positions;
  Outputs outputs = Outputs::kLast;
};

class Model {
 public:
  virtual ~Model() = default;
  const HParams& hparams() const { return hp_; }
  // False for encoders (BERT): they make embeddings (Head::kHidden) and no logits.
  virtual bool has_lm_head() const { return true; }

  // Evaluates a batch of sequences. Returns, per sequence in input order, its output rows
  // back to back, token order: [n_vocab * n_out] logits, or [n_embd * n_out] final hidden
  // states (after output_norm) for Head::kHidden; empty for Outputs::kNone. The pass is one
  // recorded graph run by `be`; `after` sees each node once it ran (tensor dumps). The
  // result is read back with one explicit transfer. On error no cache changes. Errors: bad
  // token ids or positions, a repeated cache, context full, a node the backend cannot run,
  // logits from a model without an LM head, a non-causal model's sequence in several passes.
  Result<std::vector<std::vector<float>>> forward_batch(
      Backend& be, std::span<const SeqInput> seqs, Head head,
      const std::function<void(const Node&)>& after = {}) const;

  // One sequence: the last token's logits [n_vocab], or all [n_vocab * n_tokens] when
  // all_logits.
  Result<std::vector<float>> forward(Backend& be, KvCache& kv, std::span<const int32_t> tokens,
                                     std::span<const int32_t> positions, bool all_logits) const;

  // Context shift: drops cells [first, first + n) of kv, moves the later cells down and
  // re-rotates their keys by -n positions (RoPE of the K rows, as llama.cpp's K-shift does),
  // so the cache again holds positions 0..used()-1.
  Status shift(Backend& be, KvCache& kv, int64_t first, int64_t n) const;

  // Keeps the buffer the weight views name (the model file's bytes) alive with the model.
  void own_weights(std::unique_ptr<Buffer> weights) { weights_ = std::move(weights); }

 protected:
  explicit Model(HParams hp) : hp_(std::move(hp)) {}
  // The architecture's RoPE settings (mode, dims) and its per-frequency factors, if any, for
  // sequences of n_ctx cells (phi3's LongRoPE factors depend on it).
  virtual RopeParams rope() const = 0;
  RopeParams rope_for(int64_t il) const { return layer_rope(rope(), hp_.layer(il)); }
  virtual std::optional<TensorView> rope_factors(int64_t n_ctx) const = 0;
  // The architecture's graph. Inputs are validated and c.rope is set; returns
  // [n_vocab or n_embd, c.out_rows.size()] as c.head says.
  virtual TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const = 0;

  HParams hp_;
  std::unique_ptr<Buffer> weights_;
};

}  // namespace paddock
