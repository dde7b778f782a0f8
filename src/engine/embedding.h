// Embeddings: the final hidden states of all prompt tokens (a decoder's after output_norm,
// before the LM head; an encoder's last layer, its input in one pass), pooled as the GGUF's <arch>.pooling_type says (mean when
// absent or "none", cls = the first token, last = the last token). Not normalised: the
// server normalises. The cache is cleared first and holds the text's tokens afterwards.
//   PADDOCK_ASSIGN(std::vector<float> e, embed(model, kv, tokens));
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/loaded_model.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace paddock::engine {

// Errors: no tokens, more tokens than the cache holds (kInvalidArgument, "the input length
// exceeds the context length"). Passes take at most n_batch tokens (an encoder's input must
// fit one).
Result<std::vector<float>> embed(const Model& model, Backend& be, KvCache& kv, std::span<const int32_t> tokens,
                                 int64_t n_batch);
inline Result<std::vector<float>> embed(const LoadedModel& model, KvCache& kv, std::span<const int32_t> tokens) {
  return embed(model.model(), model.backend(), kv, tokens, model.n_batch());
}

// The input cut to n_ctx tokens, keeping its closing token (an encoder's [SEP]) when the
// tokenizer adds one, as Ollama truncates embedding inputs.
std::vector<int32_t> truncate_input(std::vector<int32_t> ids, int64_t n_ctx, const Tokenizer& tok);

}  // namespace paddock::engine
