// qwen2: the llama layer with biases on the Q/K/V projections and NeoX RoPE.
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

struct Qwen2Weights {
  EmbdHeadWeights embd_head;
  std::vector<PreNormLayerWeights> layers;
};

class Qwen2Model final : public Model {
 public:
  Qwen2Model(HParams hp, Qwen2Weights w) : Model(std::move(hp)), w_(std::move(w)) {}

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
  Qwen2Weights w_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen2(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "qwen2"));
  WeightBinder b(file, backend, weights);
  Qwen2Weights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l, bind_pre_norm_layer(b, hp, il, {.qkv_bias = Part::kRequired}));
    w.layers.push_back(std::move(l));
  }
  return std::unique_ptr<Model>(std::make_unique<Qwen2Model>(std::move(hp), std::move(w)));
}

}  // namespace paddock
