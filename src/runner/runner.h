// The Runner: the one seam between the HTTP server (and CLI) and an inference engine. A
// Runner owns one loaded model; the server never sees kernels, graphs or KV caches.
// Invariants: a Runner loaded with num_parallel N accepts up to N complete() calls at once
// from different threads (the in-process runner decodes them together in shared batches;
// further calls wait for a free slot); with N = 1 calls are served one at a time. embed(),
// tokenize() and detokenize() may be called at any time. complete() calls on_chunk in order
// on the calling thread, the last call has done=true (unless it returns an error or is
// cancelled); returning false from on_chunk, or is_cancelled() turning true (polled during
// prompt processing too), stops the work and complete() returns kCancelled.
//   PADDOCK_ASSIGN(auto r, factory(LoadOptions{.model_path = blob}));
//   PADDOCK_TRY(r->complete(req, [](const CompletionChunk& c) { return send(c.text); }));
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace paddock::runner {

// Sampler and context settings (Ollama's api.Options). Unset = the engine's default.
struct SamplingOptions {
  std::optional<double> temperature, top_p, min_p, typical_p, repeat_penalty, presence_penalty,
      frequency_penalty;
  std::optional<int64_t> top_k, repeat_last_n, seed, num_predict, num_keep;
  std::vector<std::string> stop;
};

// A limit on the thinking section (`think: {"budget": N}` and its Anthropic form): after
// max_tokens tokens inside the section (entered when the output spells `open`, or from the
// start when starts_inside), the runner emits `close` itself and the answer follows.
struct ThinkingBudget {
  int64_t max_tokens = 0;      // >= 0
  std::string open, close;     // the template's tags; `close` with the whitespace that follows it
  bool starts_inside = false;  // the prompt already ends inside the section
};

struct CompletionRequest {
  std::string prompt;               // already templated; used when `tokens` is empty
  std::vector<int32_t> tokens;      // pre-tokenised prompt (wins over `prompt`)
  std::vector<std::string> images;  // raw image bytes (only for models with vision)
  SamplingOptions options;
  std::string format;  // "" = free text, "json", or a JSON schema (serialised object)
  // GBNF (start rule "root") for output that `format` cannot describe, such as a tool call in
  // its tags; exclusive with `format`.
  std::string grammar;
  bool logprobs = false;
  int top_logprobs = 0;                // 0..20
  std::optional<ThinkingBudget> thinking_budget;
  std::function<bool()> is_cancelled;  // polled between batches; may be empty
};

struct TokenLogprob {
  std::string token;
  double logprob = 0;
  std::vector<uint8_t> bytes;
  std::vector<TokenLogprob> top;  // only filled on the sampled token
};

struct CompletionChunk {
  std::string text;  // a piece of output; never splits a UTF-8 character
  std::vector<TokenLogprob> logprobs;
  bool done = false;
  std::string done_reason;                                     // on the last chunk: "stop" | "length"
  int64_t prompt_eval_count = 0, prompt_eval_duration_ns = 0;  // on the last chunk: the whole prompt
  int64_t prompt_cached_count = 0;  // on the last chunk: the part of the prompt reused from the KV cache
  int64_t eval_count = 0, eval_duration_ns = 0;  // on the last chunk
  int64_t truncated_tokens = 0;  // on the last chunk: prompt tokens cut to fit the context (0 = none)
  std::string stop_sequence;     // on the last chunk: the stop string that ended the output ("" = none)
};
using ChunkFn = std::function<bool(const CompletionChunk&)>;

struct Embedding {
  std::vector<float> values;  // pooled (as the model's pooling_type says), not normalised
  int64_t prompt_tokens = 0;
};

struct ModelFacts {
  int64_t context_length = 0;  // the context the runner was loaded with
  int64_t trained_context_length = 0;
  bool has_vision = false;
  bool embedding_only = false;
  uint64_t memory_bytes = 0;         // all memory held by the loaded model
  uint64_t device_memory_bytes = 0;  // the part of it on accelerators
};

class Runner {
 public:
  virtual ~Runner() = default;
  virtual ModelFacts facts() const = 0;
  virtual Status complete(const CompletionRequest& request, const ChunkFn& on_chunk) = 0;
  // One embedding per text: the final hidden states pooled as the model's pooling_type says
  // (mean when it has none), not normalised (the server normalises). Texts are tokenized
  // with BOS as the vocabulary says. A text longer than the context: truncate=true keeps its
  // first num_ctx tokens; truncate=false is kInvalidArgument context_exceeded_message().
  virtual Result<std::vector<Embedding>> embed(const std::vector<std::string>& texts, bool truncate) = 0;
  virtual Result<std::vector<int32_t>> tokenize(std::string_view text) = 0;
  virtual Result<std::string> detokenize(std::span<const int32_t> tokens) = 0;
};

struct LoadOptions {
  std::string model_path;  // GGUF file
  std::vector<std::string> adapter_paths, projector_paths;
  int64_t num_ctx = 0;  // 0 = the engine's default
  std::optional<int64_t> num_batch, num_thread, num_gpu;
  int64_t num_parallel = 1;  // OLLAMA_NUM_PARALLEL: sequences decoded together, each with num_ctx cells
  bool use_mmap = true;
};

// The error of an input that does not fit the context when truncate:false forbids cutting it
// (/api/embed, /api/generate, /api/chat), naming both lengths.
inline std::string context_exceeded_message(int64_t input_tokens, int64_t context_tokens) {
  return "the input length (" + std::to_string(input_tokens) + " tokens) exceeds the context length (" +
         std::to_string(context_tokens) + " tokens)";
}

// Makes a Runner: the server is given one, so tests inject fakes and `serve` the engine.
using RunnerFactory = std::function<Result<std::unique_ptr<Runner>>(const LoadOptions&)>;

}  // namespace paddock::runner
