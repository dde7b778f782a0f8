// Synthetic models for `paddock bench`: random weights in the exact shape of a public model
// (llama3.2-1b, llama3.2-3b, qwen3-0.6b, llama3.1-8b, gemma3-1b, gemma3-4b (text part),
// phi3-mini, the bert-base encoder of embedding models, and a hidden `tiny` for tests),
// quantized with llama.cpp's per-tensor mix of a file type, with a placeholder vocabulary (or
// the tokenizer.* keys of another GGUF), written as a GGUF file llama.cpp can load.
// Invariants: speed depends on shape and type, not on values, so each distinct (type, shape)
// is generated once from a few quantized random rows repeated over all rows, and every tensor
// of that (type, shape) points at the same bytes (memory stays near the largest tensors, not
// the file size). Norms are 1 +- 0.1, projections N(0, 1/sqrt(fan_in)), embeddings N(0, 0.2).
//   PADDOCK_ASSIGN(const SyntheticShape* s, find_synthetic_shape("llama3.2-1b"));
//   PADDOCK_TRY(write_synthetic_model(*s, FileType::kQ4_K_M, nullptr, 2, "/tmp/m.gguf"));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "gguf/gguf.h"
#include "quant/mix.h"

namespace paddock::cli {

// How a layer's tensors are laid out beyond llama's.
enum class ShapeLayout : uint8_t {
  kLlama,   // llama, qwen3 (qk_norm)
  kGemma3,  // + post-attention and post-FFN norms, sliding windows of `window` (gemma3: on 5 of 6
            // layers; gemma2: on even ones, its softcaps at llama.cpp's defaults)
  kPhi3,    // Q, K, V fused in attn_qkv; gate and up fused in ffn_up
  kBert,    // an encoder: position and token-type embeddings, LayerNorms and biases, GELU FFN
  kGptOss,  // biases on Q, K, V, O, the router and the experts; attention sinks; post_attention_norm
            // for ffn_norm; YaRN; sliding windows of `window` on even layers
};

struct SyntheticShape {
  std::string_view name;  // --shape value
  std::string_view arch;  // general.architecture
  int64_t n_embd;
  int64_t n_layer;
  int64_t n_head;
  int64_t n_head_kv;
  int64_t head_dim;
  int64_t n_ff;
  int64_t n_vocab;  // placeholder vocabulary size (replaced by --vocab's)
  bool tied;        // no output.weight: the head reads token_embd
  bool qk_norm;     // qwen3's attn_q_norm / attn_k_norm
  float rms_eps;    // LayerNorm's epsilon for kBert
  float rope_freq_base;
  ShapeLayout layout = ShapeLayout::kLlama;
  int64_t window = 0;  // gemma3's and gpt-oss's sliding window
  int64_t context_length = 131072;
  int64_t n_expert = 0;       // > 0: the FFN is that many experts of n_ff each (qwen3moe)
  int64_t n_expert_used = 0;  // experts per token
};

// The shape named `name` (the public ones and "tiny"); kInvalidArgument listing them otherwise.
Result<const SyntheticShape*> find_synthetic_shape(std::string_view name);
// "llama3.2-1b|llama3.2-3b|qwen3-0.6b|llama3.1-8b" (the hidden ones left out).
std::string synthetic_shape_names();

// Builds the model and writes it to `path`. vocab, when not null, supplies every tokenizer.*
// key (and the vocabulary size); otherwise a SentencePiece-style placeholder vocabulary of
// shape.n_vocab tokens is generated. n_threads < 1 means default_thread_count().
Status write_synthetic_model(const SyntheticShape& shape, FileType ftype, const gguf::File* vocab,
                             int n_threads, const std::string& path);

}  // namespace paddock::cli
