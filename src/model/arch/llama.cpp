// llama: Llama 2/3.x and Mistral. Pre-norm decoder, normal (adjacent-pair) RoPE, optional
// Llama-3.1-style per-frequency factors (rope_freqs.weight), optional attention biases,
// output tied to token_embd when output.weight is absent.
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

struct LlamaWeights {
  EmbdHeadWeights embd_head;
  std::optional<TensorView> rope_freqs;  // [n_rot / 2]
  std::vector<PreNormLayerWeights> layers;
};

class LlamaModel final : public Model {
 public:
  LlamaModel(HParams hp, LlamaWeights w) : Model(std::move(hp)), w_(std::move(w)) {}

 protected:
  RopeParams rope() const override { return rope_params(hp_, RopeMode::kNormal); }
  std::optional<TensorView> rope_factors() const override { return w_.rope_freqs; }
  TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const override {
    const size_t mark = c.g.mark();  // each layer's end releases all but its output
    TensorView x = c.g.get_rows(w_.embd_head.tok_embd, tokens, "embd");  // [n_embd, n_tokens]
    for (int64_t il = 0; il < hp_.n_layer; ++il) {
      c.g.set_layer(il);
      x = pre_norm_layer(c, il, x, w_.layers[il]);  // [n_embd, n_tokens; n_out after the last]
      c.g.release_since(mark, x);
    }
    return lm_head(c, x, w_.embd_head);  // [n_vocab or n_embd, n_out]
  }

 private:
  LlamaWeights w_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_llama(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "llama"));
  WeightBinder b(file, backend, weights);
  LlamaWeights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  PADDOCK_ASSIGN(w.rope_freqs, b.optional("rope_freqs.weight", {hp.n_rot / 2}));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l, bind_pre_norm_layer(b, hp, il, {.qkv_bias = Part::kOptional}));
    w.layers.push_back(std::move(l));
  }
  return std::unique_ptr<Model>(std::make_unique<LlamaModel>(std::move(hp), std::move(w)));
}

}  // namespace paddock
