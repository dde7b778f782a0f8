// gemma2 and gemma3: Gemma's text decoders. Embeddings scaled by sqrt(n_embd); NeoX RoPE;
// norms after attention and after the FFN as well as before (the "sandwich"); a GELU-gated
// FFN; sliding-window attention on some layers. gemma3 adds per-head RMS norms on Q and K,
// windows on 5 of every 6 layers (the pattern key) whose RoPE has its own base (10000).
// gemma2 windows every other layer (even ones, llama.cpp's set_swa_pattern(2)) and caps
// attention scores and the final logits with cap * tanh(x / cap) (50 and 30 unless the file
// says otherwise). Reads llama.cpp's keys; Ollama's published gemma3 files arrive translated
// to them (gguf/layouts.cpp).
#include <cmath>

#include "gguf/keys.h"
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

struct GemmaLayer {
  TensorView attn_norm;  // [n_embd]
  AttnWeights attn;
  TensorView attn_post_norm;  // post_attention_norm [n_embd]
  TensorView ffn_norm;        // [n_embd]
  FfnWeights ffn;
  TensorView ffn_post_norm;  // post_ffw_norm [n_embd]
};

struct GemmaWeights {
  EmbdHeadWeights embd_head;
  std::vector<GemmaLayer> layers;
};

class GemmaModel final : public Model {
 public:
  GemmaModel(HParams hp, GemmaWeights w) : Model(std::move(hp)), w_(std::move(w)) {}

 protected:
  RopeParams rope() const override { return rope_params(hp_, RopeMode::kNeox); }
  std::optional<TensorView> rope_factors(int64_t) const override { return std::nullopt; }
  TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const override {
    const size_t mark = c.g.mark();  // each layer's end releases all but its output
    TensorView x = c.g.get_rows(w_.embd_head.tok_embd, tokens, "embd");  // [n_embd, n_tokens]
    x = c.g.scale(x, std::sqrt(static_cast<float>(hp_.n_embd)), "inp_scaled");
    for (int64_t il = 0; il < hp_.n_layer; ++il) {
      c.g.set_layer(il);
      x = layer(c, il, x, w_.layers[static_cast<size_t>(il)]);  // [n_embd, n_tokens; n_out after the last]
      c.g.release_since(mark, x);
    }
    TensorView out = lm_head(c, x, w_.embd_head);  // [n_vocab or n_embd, n_out]
    const float cap = hp_.final_softcap;
    if (cap > 0 && c.head == Head::kLogits) {  // as ggml: scale, tanh, scale
      out = c.g.scale(out, 1.0f / cap, "result_output_scaled");
      out = c.g.scale(c.g.tanh(out, "result_output_tanh"), cap, "result_output_softcapped");
    }
    return out;
  }

 private:
  static TensorView layer(ForwardContext& c, int64_t il, const TensorView& x, const GemmaLayer& w) {
    TensorView residual = x;
    TensorView a = attention(c, il, norm(c, x, w.attn_norm, "attn_norm", il), w.attn);  // [n_embd, n_tokens]
    keep_output_rows(c, il, a, residual);
    a = norm(c, a, w.attn_post_norm, "attn_post_norm", il);
    const TensorView sa_out = c.g.add(a, residual, layer_name("sa_out", il));  // [n_embd, n]
    TensorView f = gated_ffn(c, il, norm(c, sa_out, w.ffn_norm, "ffn_norm", il), w.ffn, Act::kGelu);
    f = norm(c, f, w.ffn_post_norm, "ffn_post_norm", il);
    return c.g.add(f, sa_out, layer_name("l_out", il));  // [n_embd, n]
  }

  GemmaWeights w_;
};

}  // namespace

// Which layers slide a window and with which RoPE base, as llama.cpp sets them: with a
// sliding window, layer il is local unless il % pattern == pattern - 1.
Status gemma3_layer_params(const gguf::File& file, HParams& hp) {
  const gguf::KeyReader r(file, "gemma3");
  PADDOCK_ASSIGN(const int64_t window, r.optional_int("attention.sliding_window", 0));
  PADDOCK_ASSIGN(const int64_t pattern, r.optional_int("attention.sliding_window_pattern", 6));
  if (window < 0 || window > (int64_t{1} << 30) || pattern < 1) {
    return corrupt("key " + r.name("attention.sliding_window") +
                   " / _pattern: expected positive sizes, found " + std::to_string(window) + " / " +
                   std::to_string(pattern));
  }
  PADDOCK_ASSIGN(const float final_softcap, r.optional_float("final_logit_softcapping", 0.0f));
  if (window == 0 && final_softcap > 0) {
    return unsupported("gemma3 without a sliding window (final logit softcapping) is not supported");
  }
  PADDOCK_ASSIGN(const float local_base, r.optional_float("rope.freq_base_swa", 10000.0f));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    LayerParams& l = hp.layers[static_cast<size_t>(il)];
    const bool local = window > 0 && il % pattern < pattern - 1;
    l.window = local ? static_cast<int32_t>(window) : 0;
    l.rope_freq_base = local ? local_base : hp.rope_freq_base;
    if (local) l.rope_freq_scale = 1.0f;
  }
  return Status::ok();
}

// Gemma 2 (llama.cpp's defaults: a 4096-token window, caps 50 and 30).
Status gemma2_layer_params(const gguf::File& file, HParams& hp) {
  const gguf::KeyReader r(file, "gemma2");
  PADDOCK_ASSIGN(const int64_t window, r.optional_int("attention.sliding_window", 4096));
  if (window < 0 || window > (int64_t{1} << 30)) {
    return corrupt("key " + r.name("attention.sliding_window") + ": expected 0..2^30, found " +
                   std::to_string(window));
  }
  PADDOCK_ASSIGN(hp.attn_softcap, r.optional_float("attn_logit_softcapping", 50.0f));
  PADDOCK_ASSIGN(hp.final_softcap, r.optional_float("final_logit_softcapping", 30.0f));
  if (!(hp.attn_softcap >= 0) || !(hp.final_softcap >= 0) || std::isinf(hp.attn_softcap) ||
      std::isinf(hp.final_softcap)) {
    return corrupt("keys " + r.name("attn_logit_softcapping") + " / " + r.name("final_logit_softcapping") +
                   ": expected finite caps >= 0");
  }
  for (int64_t il = 0; il < hp.n_layer; ++il)
    hp.layers[static_cast<size_t>(il)].window = il % 2 == 0 ? static_cast<int32_t>(window) : 0;
  return Status::ok();
}

namespace {

// Both generations' weights; gemma3 has Q and K norms, gemma2 none. The 27B models (gemma2:
// 46 layers, gemma3: 62) scale queries by n_embd / n_head, the others by the head dim.
Result<std::unique_ptr<Model>> load_gemma(const gguf::File& file, Backend& backend, Buffer& weights,
                                          HParams hp, int64_t layers_of_27b, Part qk_norm) {
  const int64_t scale_dim = hp.n_layer == layers_of_27b ? hp.n_embd / hp.layer(0).n_head : hp.head_dim_k;
  hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(scale_dim));
  WeightBinder b(file, backend, weights);
  GemmaWeights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    GemmaLayer l;
    PADDOCK_ASSIGN(l.attn_norm, b.tensor(blk(il, "attn_norm.weight"), {hp.n_embd}));
    PADDOCK_ASSIGN(l.attn, bind_attention(b, hp, il, {.qk_norm = qk_norm}));
    PADDOCK_ASSIGN(l.attn_post_norm, b.tensor(blk(il, "post_attention_norm.weight"), {hp.n_embd}));
    PADDOCK_ASSIGN(l.ffn_norm, b.tensor(blk(il, "ffn_norm.weight"), {hp.n_embd}));
    PADDOCK_ASSIGN(l.ffn, bind_gated_ffn(b, hp, il));
    PADDOCK_ASSIGN(l.ffn_post_norm, b.tensor(blk(il, "post_ffw_norm.weight"), {hp.n_embd}));
    w.layers.push_back(std::move(l));
  }
  return std::unique_ptr<Model>(std::make_unique<GemmaModel>(std::move(hp), std::move(w)));
}

}  // namespace

Result<std::unique_ptr<Model>> load_gemma2(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "gemma2"));
  PADDOCK_TRY(gemma2_layer_params(file, hp));
  return load_gemma(file, backend, weights, std::move(hp), 46, Part::kAbsent);
}

Result<std::unique_ptr<Model>> load_gemma3(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "gemma3"));
  PADDOCK_TRY(gemma3_layer_params(file, hp));
  return load_gemma(file, backend, weights, std::move(hp), 62, Part::kRequired);
}

}  // namespace paddock
