// qwen3: the llama layer with a per-head RMS norm on Q and K before RoPE, an explicit head
// dim (attention.key_length, which may differ from n_embd / n_head) and NeoX RoPE.
#include "model/arch/archs.h"
#include "model/pre_norm_decoder.h"

namespace paddock {

Result<std::unique_ptr<Model>> load_qwen3(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "qwen3"));
  WeightBinder b(file, backend, weights);
  PreNormDecoderWeights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l, bind_pre_norm_layer(b, hp, il, {.qk_norm = Part::kRequired}));
    w.layers.push_back(std::move(l));
  }
  return make_pre_norm_decoder(std::move(hp), std::move(w), RopeMode::kNeox);
}

}  // namespace paddock
