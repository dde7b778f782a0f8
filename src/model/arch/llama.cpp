// llama: Llama 2/3.x and Mistral. Pre-norm decoder, normal (adjacent-pair) RoPE, optional
// Llama-3.1-style per-frequency factors (rope_freqs.weight), output tied to token_embd when
// output.weight is absent.
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

class LlamaModel final : public Model {
 public:
  LlamaModel(HParams hp, DecoderWeights w) : Model(std::move(hp)), w_(std::move(w)) {}

 protected:
  RopeParams rope() const override { return rope_params(hp_, RopeMode::kNormal); }
  std::optional<TensorView> rope_factors() const override { return w_.rope_freqs; }
  TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const override {
    return decoder_forward(c, tokens, w_);  // [n_vocab or n_embd, n_out]
  }

 private:
  DecoderWeights w_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_llama(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "llama"));
  PADDOCK_ASSIGN(DecoderWeights w, bind_decoder(WeightBinder(file, backend, weights), hp,
                                                DecoderOptions{.qkv_bias = false, .qk_norm = false}));
  return std::unique_ptr<Model>(std::make_unique<LlamaModel>(std::move(hp), std::move(w)));
}

}  // namespace paddock
