// qwen3moe: Qwen3's layer (per-head Q/K RMS norms, NeoX RoPE) with a mixture of experts in
// place of the FFN: a softmax router picks each token's expert_used_count experts of
// expert_count, their weights renormalised to sum 1 (qwen3:30b-a3b, qwen3-coder).
#include "model/arch/archs.h"
#include "model/pre_norm_decoder.h"

namespace paddock {

Result<std::unique_ptr<Model>> load_qwen3moe(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "qwen3moe"));
  if (hp.n_expert == 0) return corrupt("qwen3moe: missing key qwen3moe.expert_count");
  WeightBinder b(file, backend, weights);
  PreNormDecoderWeights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l,
                   bind_pre_norm_layer(b, hp, il, {.qk_norm = Part::kRequired, .moe = true}));
    w.layers.push_back(std::move(l));
  }
  return make_pre_norm_decoder(std::move(hp), std::move(w), RopeMode::kNeox);
}

}  // namespace paddock
