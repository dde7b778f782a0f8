// qwen2: the llama graph with biases on the Q/K/V projections and NeoX RoPE.
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

class Qwen2Model final : public Model {
 public:
  Qwen2Model(HParams hp, DecoderWeights w) : Model(std::move(hp)), w_(std::move(w)) {}

 protected:
  RopeParams rope() const override { return rope_params(hp_, RopeMode::kNeox); }
  std::optional<TensorView> rope_factors() const override { return w_.rope_freqs; }
  TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const override {
    return decoder_forward(c, tokens, w_);  // [n_vocab or n_embd, n_out]
  }

 private:
  DecoderWeights w_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen2(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "qwen2"));
  PADDOCK_ASSIGN(DecoderWeights w, bind_decoder(WeightBinder(file, backend, weights), hp,
                                                DecoderOptions{.qkv_bias = true, .qk_norm = false}));
  return std::unique_ptr<Model>(std::make_unique<Qwen2Model>(std::move(hp), std::move(w)));
}

}  // namespace paddock
