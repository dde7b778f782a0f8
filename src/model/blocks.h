// The building blocks of decoder-only transformers, from which each model/arch/<arch>.cpp
// writes its own layer loop (as llama.cpp's src/models/<arch>.cpp do): RMS norm and
// LayerNorm, attention with RoPE (or none) over the KV cache (optional biases and per-head
// Q/K norms; causal or not), gated FFN, the standard pre-norm layer, and the LM head; plus
// the binders of their weights.
// Invariants: blocks record graph nodes (named as llama.cpp names them, "-il" appended per
// layer) and never touch tensor bytes; activations are F32 [n, n_tokens] tensors of the
// pass's Graph; a pass holds the tokens of one or more sequences back to back (SeqSlice),
// and the tokens of each sequence go to the KV cells its cache's pass_cells() names.
//   TensorView x = c.g.get_rows(w.tok_embd, tokens, "embd");  // [n_embd, n_tokens]
//   for (int64_t il = 0; il < c.hp.n_layer; ++il) {
//     c.g.set_layer(il);  // placement runs each layer on its backend
//     x = pre_norm_layer(c, il, x, w.layers[il]);
//   }
//   return lm_head(c, x, w.head);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "backend/backend.h"
#include "backend/graph.h"
#include "kv/kv_cache.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace paddock {

struct AttnWeights {
  TensorView wq, wk, wv, wo;  // [n_embd, n_embd_q], [n_embd, n_embd_k], ..., [n_head * d_v, n_embd]
  std::optional<TensorView> bq, bk, bv, bo;  // [n_embd_q], [n_embd_k], [n_embd_v], [n_embd]
  std::optional<TensorView> q_norm, k_norm;  // [head_dim_k], per head (qwen3)
  std::optional<TensorView> sinks;           // [n_head]: attention sinks (gpt-oss)
};

struct FfnWeights {
  TensorView gate, up, down;  // [n_embd, n_ff], [n_embd, n_ff], [n_ff, n_embd]
};

// The activation of a gated FFN's gate: SiLU, GELU, or gpt-oss's clamped SwiGLU (alpha
// 1.702, limit 7, the up projection plus 1).
enum class Act : uint8_t { kSilu, kGelu, kSwigluOai };

// A mixture of experts in place of the FFN (qwen3moe, gpt-oss): the router picks each
// token's k experts, whose gated FFNs' outputs are summed, weighted by the router.
struct MoeWeights {
  TensorView gate_inp;            // [n_embd, n_expert], the router
  TensorView gate_exps, up_exps;  // [n_embd, n_ff_exp, n_expert]
  TensorView down_exps;           // [n_ff_exp, n_embd, n_expert]
  // Biases (gpt-oss): the router's [n_expert]; each expert's [n_ff_exp or n_embd, n_expert].
  std::optional<TensorView> gate_inp_b, gate_exps_b, up_exps_b, down_exps_b;
  MoeParams params;
  Act act = Act::kSilu;  // kSilu or kSwigluOai
};

// llama's layer: attn_norm, attention, residual, ffn_norm, gated FFN, residual.
struct PreNormLayerWeights {
  TensorView attn_norm;  // [n_embd]
  AttnWeights attn;
  TensorView ffn_norm;  // [n_embd]
  std::variant<FfnWeights, MoeWeights> ffn;
};

// Token embeddings and the head.
struct EmbdHeadWeights {
  TensorView tok_embd;     // [n_embd, n_vocab]
  TensorView output_norm;  // [n_embd]
  TensorView output;       // [n_embd, n_vocab], or tok_embd when tied
};

// Whether an arch's files carry a group of weights.
enum class Part : uint8_t { kAbsent, kOptional, kRequired };

struct AttnParts {
  Part qkv_bias = Part::kAbsent;  // attn_q/k/v.bias (attn_output.bias is always optional)
  Part qk_norm = Part::kAbsent;   // attn_q_norm / attn_k_norm
  Part sinks = Part::kAbsent;     // attn_sinks.weight
  bool moe = false;               // the FFN is a mixture of experts (ffn_*_exps)
};

// token_embd (which sets hp.n_vocab), output_norm and output, tied to token_embd when absent.
Result<EmbdHeadWeights> bind_embd_head(WeightBinder& b, HParams& hp);
Result<AttnWeights> bind_attention(WeightBinder& b, const HParams& hp, int64_t il, const AttnParts& parts);
// Q, K and V as row blocks of one attn_qkv matrix (phi3, nomic-bert), attn_output and its
// optional bias; no Q/K/V biases or norms.
Result<AttnWeights> bind_fused_attention(WeightBinder& b, const HParams& hp, int64_t il);
// ffn_gate, ffn_up, ffn_down of layer il.
Result<FfnWeights> bind_gated_ffn(WeightBinder& b, const HParams& hp, int64_t il);
// ffn_gate_inp and ffn_{gate,up,down}_exps of layer il (and their biases, when `biases`),
// routed as `params` says.
Result<MoeWeights> bind_moe_ffn(WeightBinder& b, const HParams& hp, int64_t il, const MoeParams& params,
                                Part biases = Part::kAbsent);
// attn_norm, attention, ffn_norm and FFN (parts.moe: the experts, softmax-routed, their
// weights renormalised as expert_weights_norm says) of layer il.
Result<PreNormLayerWeights> bind_pre_norm_layer(WeightBinder& b, const HParams& hp, int64_t il,
                                                const AttnParts& parts);

// What the head of a pass produces for its output rows.
enum class Head : uint8_t {
  kLogits,  // output_norm, then the output projection: [n_vocab] per row
  kHidden,  // output_norm only: the final hidden state [n_embd] per row (embeddings)
};

// One sequence's tokens in a pass: batch rows [first, first + n), positions continuing its cache.
struct SeqSlice {
  KvCache* kv;
  int64_t first;
  int64_t n;
};

struct ForwardContext {
  Graph& g;
  const HParams& hp;
  std::span<const int32_t> pos;       // one per token of the pass
  std::span<const SeqSlice> seqs;     // cover the pass's tokens in order
  std::span<const int32_t> out_rows;  // batch rows that produce output, ascending
  Head head;
  RopeParams rope;                         // the model's; each layer's base and scale: layer_rope
  std::optional<TensorView> rope_factors;  // the model's per-frequency factors, if any (Model::rope_factors)
  int64_t n_tokens() const { return static_cast<int64_t>(pos.size()); }
  bool last_layer(int64_t il) const { return il == hp.n_layer - 1; }
};

// RoPE settings from the hparams (the factors travel as a node input: ForwardContext).
RopeParams rope_params(const HParams& hp, RopeMode mode);
// r with a layer's own frequency base and scale.
RopeParams layer_rope(RopeParams r, const LayerParams& l);

// "name-il", or name alone for il < 0: llama.cpp's tensor names.
std::string layer_name(std::string_view name, int64_t il);

// rms_norm(x) * weight, the product named `name`. x [n, ...] -> [n, ...]
TensorView norm(ForwardContext& c, const TensorView& x, const TensorView& weight, std::string_view name,
                int64_t il);
// LayerNorm: norm(x) * weight + bias, named `name` (hp.norm_eps). x [n, ...] -> [n, ...]
TensorView layer_norm(ForwardContext& c, const TensorView& x, const TensorView& weight,
                      const TensorView& bias, std::string_view name, int64_t il);
// w x, plus bias when there is one, named `name`. x [n_in, n] -> [n_out, n]
TensorView linear(ForwardContext& c, const TensorView& w, const std::optional<TensorView>& bias,
                  const TensorView& x, const std::string& name);
// Self-attention of layer il, writing this pass's K/V into each sequence's cache and
// attending per sequence (over the layer's sliding window, if it has one, with RoPE of the
// layer's base). x [n_embd, n_tokens] (already normed) -> [n_embd, n_tokens]
TensorView attention(ForwardContext& c, int64_t il, const TensorView& x, const AttnWeights& w);
// down(act(gate x) * up x). x [n_embd, n] -> [n_embd, n]
TensorView gated_ffn(ForwardContext& c, int64_t il, const TensorView& x, const FfnWeights& w,
                     Act act = Act::kSilu);
// The experts' FFN: each token's k experts' gated FFNs (w.act), weighted by the router and
// summed. x [n_embd, n] -> [n_embd, n]
TensorView moe_ffn(ForwardContext& c, int64_t il, const TensorView& x, const MoeWeights& w);
// As llama.cpp does, the last layer keeps only the output rows once attention has mixed
// the tokens: from there on every op is row-wise. Both [n, n_tokens] -> [n, n_out] then.
void keep_output_rows(ForwardContext& c, int64_t il, TensorView& cur, TensorView& residual);
// One pre-norm layer; on the last layer the output rows only. x [n_embd, n_tokens] ->
// [n_embd, n_tokens or n_out]
TensorView pre_norm_layer(ForwardContext& c, int64_t il, const TensorView& x, const PreNormLayerWeights& w);
// Final norm (and, for Head::kLogits, the output projection), recorded as the output layer
// (n_layer). x [n_embd, n_out] (the output rows only) -> [n_vocab or n_embd, n_out]
TensorView lm_head(ForwardContext& c, const TensorView& x, const EmbdHeadWeights& w);

}  // namespace paddock
