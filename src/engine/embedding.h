// Embeddings from a decoder model: the final hidden states (after output_norm, before the
// LM head) of all prompt tokens, pooled as the GGUF's <arch>.pooling_type says (mean when
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

namespace paddock::engine {

// Errors: no tokens, more tokens than the cache holds (kInvalidArgument, "the input length
// exceeds the context length").
Result<std::vector<float>> embed(const LoadedModel& model, KvCache& kv, std::span<const int32_t> tokens);

}  // namespace paddock::engine
