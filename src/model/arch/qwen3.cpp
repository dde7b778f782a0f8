// qwen3: the llama graph with a per-head RMS norm on Q and K before RoPE, an explicit head
// dim (attention.key_length, which may differ from n_embd / n_head) and NeoX RoPE.
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

class Qwen3Model final : public Model {
 public:
  Qwen3Model(HParams hp, DecoderWeights w) : Model(std::move(hp)), w_(std::move(w)) {}

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

Result<std::unique_ptr<Model>> load_qwen3(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "qwen3"));
  PADDOCK_ASSIGN(DecoderWeights w, bind_decoder(WeightBinder(file, backend, weights), hp,
                                                DecoderOptions{.qkv_bias = false, .qk_norm = true}));
  return std::unique_ptr<Model>(std::make_unique<Qwen3Model>(std::move(hp), std::move(w)));
}

}  // namespace paddock
