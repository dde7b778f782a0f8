// One completion as a state machine that a batch loop drives one step at a time, so several
// completions share forward passes (continuous batching) and a single completion is just a
// batch of one. A Sequence owns its prompt, sampler (and grammar), detokenizer, stop
// matcher and stats; its KvCache is lent to it for its lifetime.
// Step protocol: next(max_tokens) says what the sequence wants evaluated (a prompt chunk or
// its last sampled token; it shifts the context first when the cache is full), the caller
// runs one Model::forward_batch over the inputs of all sequences, then advance(output) with
// this sequence's logits (or fail(status) when the pass failed). Once done(), result() holds
// the stats or the error (kCancelled when cancelled: no final piece is sent then).
//   PADDOCK_ASSIGN(auto seq, Sequence::start(model, kv, params, on_piece));
//   Sequence* seqs[] = {seq.get()};  while (!seq->done()) step(model, seqs);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/completion.h"
#include "engine/loaded_model.h"
#include "engine/stop_strings.h"
#include "engine/thinking_budget.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace paddock::engine {

// The prompt tokens of a completion: `tokens` when given, else `prompt` tokenized. Empty is
// kInvalidArgument.
Result<std::vector<int32_t>> prompt_tokens(const LoadedModel& model, const CompletionParams& params);

class Sequence {
 public:
  // Tokenizes, fits the prompt to the context, builds the sampler, and keeps the part of the
  // cache that holds a prefix of the prompt (only the rest is evaluated; at least one token).
  static Result<std::unique_ptr<Sequence>> start(const LoadedModel& model, KvCache& kv,
                                                 const CompletionParams& params, PieceFn on_piece);

  // The input for the next pass: up to max_tokens (>= 1) prompt tokens, or the token sampled
  // last. nullopt when done (a cancellation or a full context can end it here).
  std::optional<SeqInput> next(int64_t max_tokens);
  // The pass ran: `output` is this sequence's logits when its input asked for them.
  void advance(std::span<const float> output);
  // The pass failed: the sequence ends with this error.
  void fail(Status status);

  bool done() const { return done_; }
  bool prefilling() const { return evaluated_ < prompt_.size(); }
  const Result<CompletionStats>& result() const { return result_; }

 private:
  Sequence(const LoadedModel& model, KvCache& kv, const CompletionParams& params, PieceFn on_piece,
           sample::Sampler sampler);
  bool cancelled() const;
  void sample_and_emit(std::span<const float> logits);
  bool emit(std::string text, bool final);
  void finish(const std::string& reason);
  void end(Status status);

  const LoadedModel& model_;
  KvCache& kv_;
  CompletionParams params_;
  PieceFn on_piece_;
  sample::Sampler sampler_;
  StreamingDetokenizer detok_;
  StopMatcher stops_;
  std::optional<ThinkingLimiter> thinking_;
  std::vector<int32_t> prompt_;
  size_t evaluated_ = 0;  // prompt tokens already in the cache
  size_t in_flight_ = 0;  // prompt tokens handed out by the last next()
  int32_t last_ = -1;     // the token sampled last, fed in the next pass
  std::vector<int32_t> pos_;
  Piece piece_;
  CompletionStats stats_;
  int64_t started_ns_ = 0;
  int64_t decode_start_ns_ = 0;
  bool done_ = false;
  Result<CompletionStats> result_ = CompletionStats{};
};

// One batch step over the sequences that are not done: decode tokens first, then prompt
// chunks, at most model.n_batch() tokens in all. Sequences that end on the way are skipped.
void step(const LoadedModel& model, std::span<Sequence* const> seqs);

}  // namespace paddock::engine
