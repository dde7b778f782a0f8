// Model hyperparameters read from GGUF keys (`<arch>.embedding_length`, ...), validated so
// that every size the forward pass derives from them is positive and consistent. Head and
// FFN sizes are per layer (the keys may be arrays, one value per layer).
//   PADDOCK_ASSIGN(HParams hp, load_hparams(file, "llama"));
//   const int64_t n_q = hp.n_embd_q(il);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace paddock {

// How embeddings pool the final hidden states (llama.cpp's pooling_type ids 0..3). Decoder
// GGUFs usually have no key: then mean, as Ollama pools.
enum class Pooling : uint8_t { kNone, kMean, kCls, kLast };

// What may differ from layer to layer.
struct LayerParams {
  int64_t n_head = 0;         // attention.head_count
  int64_t n_head_kv = 0;      // attention.head_count_kv, default n_head
  int64_t n_ff = 0;           // feed_forward_length
  int32_t window = 0;         // > 0: sliding-window attention over that many positions (set by the arch)
  float rope_freq_base = 0;   // rope.freq_base unless the arch sets another (gemma3's local layers)
  float rope_freq_scale = 0;  // likewise, from rope.scaling
};

struct HParams {
  std::string arch;
  int64_t n_vocab = 0;  // from token_embd.weight, filled in by the weight binder
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  std::vector<LayerParams> layers;  // n_layer entries
  int64_t head_dim_k = 0;           // attention.key_length, default n_embd / layer 0's n_head
  int64_t head_dim_v = 0;           // attention.value_length, default head_dim_k
  int64_t n_rot = 0;                // rope.dimension_count, default head_dim_k; 0: no RoPE (set by the arch)
  float rms_eps = 0;                // attention.layer_norm_rms_epsilon (RMS norm models)
  float norm_eps = 0;       // attention.layer_norm_epsilon (LayerNorm models: BERT); one of the two is set
  bool causal = true;       // attention.causal: false for encoders, whose tokens see the whole sequence
  float attn_scale = 0;     // scores = attn_scale * q.k; 0: 1 / sqrt(head_dim_k)
  float attn_softcap = 0;   // > 0: scores = cap * tanh(scores / cap) (gemma2)
  float final_softcap = 0;  // > 0: logits = cap * tanh(logits / cap) (gemma2)
  float rope_freq_base = 10000.0f;  // each layer's starts as this one
  float rope_freq_scale = 1.0f;     // 1 / rope.scaling.factor for linear and YaRN scaling
  // YaRN (rope.scaling.type yarn), as llama.cpp's context sets it up: RopeParams' fields.
  float yarn_ext_factor = 0.0f;      // 1 with YaRN
  float yarn_attn_factor = 1.0f;     // with rope.scaling.attn_factor, YaRN or not
  float yarn_beta_fast = 32.0f;      // rope.scaling.yarn_beta_fast
  float yarn_beta_slow = 1.0f;       // rope.scaling.yarn_beta_slow
  int64_t n_ctx_orig_yarn = 0;       // rope.scaling.original_context_length, default context_length
                                     // (also phi3's LongRoPE: long factors beyond it)
  Pooling pooling = Pooling::kMean;  // pooling_type
  int64_t n_expert = 0;              // expert_count: 0 for a dense model
  int64_t n_expert_used = 0;         // expert_used_count: experts per token
  int64_t n_ff_exp = 0;              // expert_feed_forward_length, default feed_forward_length
  bool expert_weights_norm = true;   // the chosen experts' weights rescaled to sum 1

  const LayerParams& layer(int64_t il) const { return layers[static_cast<size_t>(il)]; }
  int64_t n_embd_q(int64_t il) const { return layer(il).n_head * head_dim_k; }
  int64_t n_embd_k(int64_t il) const { return layer(il).n_head_kv * head_dim_k; }
  int64_t n_embd_v(int64_t il) const { return layer(il).n_head_kv * head_dim_v; }
};

// Errors: neither attention.layer_norm_rms_epsilon nor attention.layer_norm_epsilon present.
Result<HParams> load_hparams(const gguf::File& file, std::string_view arch);

}  // namespace paddock
