// One completion over one sequence: tokenize, fit the prompt to the context, prefill in
// batches, then sample / detokenize / stop-check token by token, streaming text to a callback.
// Invariants: emitted text never splits a UTF-8 character and never contains (or runs past)
// a stop string; the callback sees pieces in order; cancellation (callback returning false
// or is_cancelled()) is noticed between prefill batches and between decode steps and
// returns kCancelled. The part of the KV cache that holds a prefix of the prompt is reused
// (only the rest is evaluated); a full cache shifts (keeps num_keep tokens, drops half of the
// rest). Runs as a batch of one engine::Sequence (sequence.h). See docs/engine-loop.md.
//   PADDOCK_ASSIGN(KvCache kv, m->make_kv_cache());
//   PADDOCK_ASSIGN(CompletionStats st, complete(*m, kv, params, [](const Piece& p) { ...; return true; }));
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/loaded_model.h"
#include "kv/kv_cache.h"
#include "sample/sampler.h"

namespace paddock::engine {

// Sampler defaults as Ollama's runner uses them: api.DefaultOptions, except repeat_penalty
// 1.0 (current Ollama code, reference ollama.md §5.3), so temperature 0 is plain argmax.
sample::SamplerParams default_sampler_params();

// A limit on the model's thinking section: after max_tokens tokens inside it (entered when the
// output spells `open`, or from the start when the prompt already ends inside it) without
// `close`, the tokens of `close` are forced one per step instead of sampled, so the section
// ends and the answer follows. Forced tokens are fed to the model, emitted and counted in
// eval_count like sampled ones; they enter the penalty window but not a grammar.
struct ThinkingBudget {
  int64_t max_tokens = 0;  // >= 0; 0 closes the section at once
  std::string open, close;
  bool starts_inside = false;
};

struct CompletionParams {
  std::string prompt;           // tokenized when `tokens` is empty
  std::vector<int32_t> tokens;  // a pre-tokenized prompt (wins over `prompt`)
  bool add_special = true;      // BOS/EOS as the vocabulary says
  bool parse_special = true;    // templated prompts spell control tokens as text
  sample::SamplerParams sampling = default_sampler_params();
  // > 0: at most this many tokens; -1 and 0: unlimited (the context shifts when full);
  // -2: until the context is full.
  int64_t num_predict = -1;
  // Tokens kept at the start when the prompt is cut or the context shifts; -1 = the prompt.
  int64_t num_keep = 4;
  std::vector<std::string> stop;
  std::string format;                  // "" | "json" | a JSON schema (JSON text): constrains output to it
  std::string grammar;                 // GBNF text (root rule "root"); exclusive with format
  std::optional<ThinkingBudget> thinking_budget;
  std::function<bool()> is_cancelled;  // may be empty
};

struct TokenInfo {
  int32_t id = 0;
  std::string text;  // the token's bytes (may be part of a UTF-8 character)
  float logprob = 0;
  std::vector<TokenInfo> top;  // alternatives, best first; only on the sampled token
};

// A piece of output: text plus, when logprobs were asked for, the tokens that produced it.
struct Piece {
  std::string text;
  std::vector<TokenInfo> logprobs;
};
// Returning false cancels the completion.
using PieceFn = std::function<bool(const Piece&)>;

struct CompletionStats {
  std::string done_reason;  // "stop" (EOG token or stop string) | "length" (num_predict or full context)
  int64_t prompt_eval_count = 0;    // the whole prompt, after truncation (as Ollama reports it)
  int64_t prompt_cached_count = 0;  // the part of it served from the KV cache, not evaluated again
  int64_t prompt_eval_duration_ns = 0;
  int64_t eval_count = 0;  // tokens sampled, the EOG token included
  int64_t eval_duration_ns = 0;
  int64_t truncated_tokens = 0;  // prompt tokens cut because it did not fit (num_keep rule); 0 = none
  std::string stop_sequence;     // the stop string that ended the output; "" = none did
};

// Runs one completion; the final held-back text (if any) is delivered to on_piece before
// returning. Errors: empty prompt, bad format/grammar/options (kInvalidArgument),
// cancellation (kCancelled), model failures.
Result<CompletionStats> complete(const LoadedModel& model, KvCache& kv, const CompletionParams& params,
                                 const PieceFn& on_piece);

// Fits a prompt into n_ctx tokens as Ollama's runner does: when it is longer, keep the first
// min(num_keep, n_ctx - 1) tokens (num_keep < 0: as many as possible) and the last ones.
std::vector<int32_t> fit_prompt(std::vector<int32_t> tokens, int64_t n_ctx, int64_t num_keep);

// `paddock eval --prompt` and other simple callers: generates from `prompt` (raw text,
// tokenized with BOS, control tokens parsed) with a fresh KV cache, streaming text to
// on_text (may be empty; returning false cancels). Returns the whole text.
Result<std::string> generate(const LoadedModel& model, std::string_view prompt,
                             const CompletionParams& params,
                             const std::function<bool(std::string_view)>& on_text = {});

}  // namespace paddock::engine
