// gpt-oss: llama's pre-norm layer (post_attention_norm in ffn_norm's place) with biases on
// Q, K, V and the output, per-head attention sinks, sliding-window attention on even layers
// (window from the file), NeoX RoPE with YaRN scaling, and a mixture of experts whose router
// keeps the top k logits and softmaxes over them, with biases on the router and every
// expert and the clamped SwiGLU. Ollama's published files load too: gguf/layouts.cpp
// translates them to this layout first.
#include "gguf/keys.h"
#include "model/arch/archs.h"
#include "model/pre_norm_decoder.h"

namespace paddock {

namespace {

// As llama.cpp sets gpt-oss up: layer il slides the window unless il % 2 == 1, with
// rope.freq_base_swa when the file has one.
Status set_windows(const gguf::KeyReader& r, HParams& hp) {
  PADDOCK_ASSIGN(const int64_t window, r.required_int("attention.sliding_window"));
  if (window < 1 || window > (int64_t{1} << 30)) {
    return corrupt("key " + r.name("attention.sliding_window") + ": expected 1..2^30, found " +
                   std::to_string(window));
  }
  PADDOCK_ASSIGN(const float swa_base, r.optional_float("rope.freq_base_swa", hp.rope_freq_base));
  for (int64_t il = 0; il < hp.n_layer; il += 2) {
    LayerParams& l = hp.layers[static_cast<size_t>(il)];
    l.window = static_cast<int32_t>(window);
    l.rope_freq_base = swa_base;
  }
  return Status::ok();
}

}  // namespace

Status gptoss_layer_params(const gguf::File& file, HParams& hp) {
  return set_windows(gguf::KeyReader(file, "gpt-oss"), hp);
}

Result<std::unique_ptr<Model>> load_gptoss(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "gpt-oss"));
  if (hp.n_expert == 0) return corrupt("gpt-oss: missing key gpt-oss.expert_count");
  PADDOCK_TRY(gptoss_layer_params(file, hp));
  WeightBinder b(file, backend, weights);
  PreNormDecoderWeights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  const MoeParams routing{.k = static_cast<int32_t>(hp.n_expert_used), .gating = MoeGating::kTopKSoftmax};
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PreNormLayerWeights l;
    PADDOCK_ASSIGN(l.attn_norm, b.tensor(blk(il, "attn_norm.weight"), {hp.n_embd}));
    PADDOCK_ASSIGN(l.attn, bind_attention(b, hp, il, {.qkv_bias = Part::kRequired, .sinks = Part::kRequired}));
    PADDOCK_ASSIGN(l.ffn_norm, b.tensor(blk(il, "post_attention_norm.weight"), {hp.n_embd}));
    PADDOCK_ASSIGN(MoeWeights moe, bind_moe_ffn(b, hp, il, routing, Part::kRequired));
    moe.act = Act::kSwigluOai;
    l.ffn = std::move(moe);
    w.layers.push_back(std::move(l));
  }
  return make_pre_norm_decoder(std::move(hp), std::move(w), RopeMode::kNeox);
}

}  // namespace paddock
