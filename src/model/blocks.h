// The shared building blocks of decoder-only transformers: RMS norm, attention with RoPE
// over the KV cache, SiLU-gated FFN, and the LM head. An architecture file binds its weights
// into LayerWeights and strings these blocks together; a new architecture reuses them and
// adds only what differs.
// Invariants: blocks record graph nodes (named as llama.cpp names them, "-il" appended per
// layer) and never touch tensor bytes; activations are F32 [n, n_tokens] tensors of the
// pass's Graph; a pass holds the tokens of one or more sequences back to back (SeqSlice),
// and the tokens of each sequence occupy its KV cells kv_first .. kv_first + n - 1
// (cell = position).
//   TensorView h = norm(ctx, x, lw.attn_norm, "attn_norm", il);  // [n_embd, n_tokens]
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "backend/graph.h"
#include "kv/kv_cache.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace paddock {

struct LayerWeights {
  TensorView attn_norm;                  // [n_embd]
  TensorView wq, wk, wv, wo;             // [n_embd, n_embd_q], [n_embd, n_embd_k], ..., [n_embd_q, n_embd]
  std::optional<TensorView> bq, bk, bv;  // qwen2: [n_embd_q], [n_embd_k], [n_embd_v]
  std::optional<TensorView> q_norm, k_norm;  // qwen3: [head_dim_k], per head
  TensorView ffn_norm;                       // [n_embd]
  TensorView ffn_gate, ffn_up, ffn_down;     // [n_embd, n_ff], [n_embd, n_ff], [n_ff, n_embd]
};

// The weights every decoder here has; arch files add their own where they differ.
struct DecoderWeights {
  TensorView tok_embd;                   // [n_embd, n_vocab]
  TensorView output_norm;                // [n_embd]
  TensorView output;                     // [n_embd, n_vocab], or tok_embd when tied
  std::optional<TensorView> rope_freqs;  // [n_rot / 2]
  std::vector<LayerWeights> layers;
};

// Binds token_embd, output_norm, output (tied to token_embd when absent), rope_freqs and
// each layer's attention and FFN weights by their GGUF names; biases and q/k norms only when
// asked for (and then they are required).
struct DecoderOptions {
  bool qkv_bias = false;
  bool qk_norm = false;
};
Result<DecoderWeights> bind_decoder(const WeightBinder& b, HParams& hp, const DecoderOptions& opt);

// What the head of a pass produces for its output rows.
enum class Head : uint8_t {
  kLogits,  // output_norm, then the output projection: [n_vocab] per row
  kHidden,  // output_norm only: the final hidden state [n_embd] per row (embeddings)
};

// One sequence's tokens in a pass: batch rows [first, first + n), KV cells from kv_first.
struct SeqSlice {
  KvCache* kv;
  int64_t first;
  int64_t n;
  int64_t kv_first;
};

struct ForwardContext {
  Graph& g;
  const HParams& hp;
  std::span<const int32_t> pos;       // one per token of the pass
  std::span<const SeqSlice> seqs;     // cover the pass's tokens in order
  std::span<const int64_t> out_rows;  // batch rows that produce output, ascending
  Head head;
  RopeParams rope;
  std::optional<TensorView> rope_factors;  // rope_freqs.weight, when the model has it
  int64_t n_tokens() const { return static_cast<int64_t>(pos.size()); }
};

// RoPE settings from the hparams (the factors travel as a node input: ForwardContext).
RopeParams rope_params(const HParams& hp, RopeMode mode);

// "name-il", or name alone for il < 0: llama.cpp's tensor names.
std::string layer_name(std::string_view name, int64_t il);

// rms_norm(x) * weight, the product named `name`. x [n, ...] -> [n, ...]
TensorView norm(ForwardContext& c, const TensorView& x, const TensorView& weight, std::string_view name,
                int64_t il);
// Self-attention of layer il, writing this pass's K/V into each sequence's cache and
// attending per sequence. x [n_embd, n_tokens] (already normed) -> [n_embd, n_tokens]
TensorView attention(ForwardContext& c, int64_t il, const TensorView& x, const LayerWeights& lw);
// down(silu(gate x) * up x). x [n_embd, n] -> [n_embd, n]
TensorView gated_ffn(ForwardContext& c, int64_t il, const TensorView& x, const LayerWeights& lw);
// Final norm (and, for Head::kLogits, the output projection). x [n_embd, n_out] (the output
// rows only) -> [n_vocab or n_embd, n_out]
TensorView lm_head(ForwardContext& c, const TensorView& x, const DecoderWeights& w);
// The standard pre-norm decoder stack over all layers, then the head. As llama.cpp does, the
// last layer keeps only the output rows once attention has mixed the tokens.
TensorView decoder_forward(ForwardContext& c, std::span<const int32_t> tokens, const DecoderWeights& w);

}  // namespace paddock
