// llama: Llama 2/3.x and Mistral. Pre-norm decoder, normal (adjacent-pair) RoPE, optional
// Llama-3.1-style per-frequency factors (rope_freqs.weight), optional attention biases,
// output tied to token_embd when output.weight is absent.
#include "model/arch/archs.h"
#include "model/pre_norm_decoder.h"

namespace paddock {

Result<std::unique_ptr<Model>> load_llama(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "llama"));
  WeightBinder b(file, backend, weights);
  PreNormDecoderWeights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  PADDOCK_ASSIGN(w.rope_freqs, b.optional("rope_freqs.weight", {hp.n_rot / 2}));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l, bind_pre_norm_layer(b, hp, il, {.qkv_bias = Part::kOptional}));
    w.layers.push_back(std::move(l));
  }
  return make_pre_norm_decoder(std::move(hp), std::move(w), RopeMode::kNormal);
}

}  // namespace paddock
