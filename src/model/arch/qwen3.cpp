// qwen3: the llama layer with a per-head RMS norm on Q and K before RoPE, an explicit head
// dim (attention.key_length, which may differ from n_embd / n_head) and NeoX RoPE.
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

struct Qwen3Weights {
  EmbdHeadWeights embd_head;
  std::vector<PreNormLayerWeights> layers;
};

class Qwen3Model final : public Model {
 public:
  Qwen3Model(HParams hp, Qwen3Weights w) : Model(std::move(hp)), w_(std::move(w)) {}

 protected:
  RopeParams rope() const override { return rope_params(hp_, RopeMode::kNeox); }
  std::optional<TensorView> rope_factors() const override { return std::nullopt; }
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
  Qwen3Weights w_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen3(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "qwen3"));
  WeightBinder b(file, backend, weights);
  Qwen3Weights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l, bind_pre_norm_layer(b, hp, il, {.qk_norm = Part::kRequired}));
    w.layers.push_back(std::move(l));
  }
  return std::unique_ptr<Model>(std::make_unique<Qwen3Model>(std::move(hp), std::move(w)));
}

}  // namespace paddock
