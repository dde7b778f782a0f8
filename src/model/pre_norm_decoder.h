// The decoder made of llama's pre-norm layers only (llama, qwen2, qwen3, phi3): token
// embeddings, each layer as pre_norm_layer (blocks.h), the head. Their arch files bind the
// weights and name the RoPE; an architecture whose layer departs from llama's writes its own
// Model subclass and layer loop (arch/gemma.cpp).
//   PreNormDecoderWeights w;  ...bind...
//   return make_pre_norm_decoder(std::move(hp), std::move(w), RopeMode::kNeox);
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "model/blocks.h"
#include "model/model.h"

namespace paddock {

struct PreNormDecoderWeights {
  EmbdHeadWeights embd_head;
  // [n_rot / 2] per-frequency RoPE factors: llama's rope_freqs.weight, or phi3's LongRoPE
  // short factors with the long ones beside them, taken for contexts beyond n_ctx_orig_yarn
  // (llama.cpp's get_rope_factors).
  std::optional<TensorView> rope_freqs;
  std::optional<TensorView> rope_freqs_long;
  std::vector<PreNormLayerWeights> layers;
};

std::unique_ptr<Model> make_pre_norm_decoder(HParams hp, PreNormDecoderWeights w, RopeMode mode);

}  // namespace paddock
