// The sampler: Ollama's options over one sequence's logits, optionally constrained by a
// grammar. Chain order (llama.cpp's common sampler, which Ollama's runner uses):
//   logit_bias -> penalties -> [grammar] -> top_k -> typical_p -> top_p -> min_p -> temperature -> draw
// temperature <= 0 is greedy (argmax, ties to the lowest id). The grammar is applied lazily:
// candidates are visited best-first and checked only until the chain has what it needs
// (1 for greedy, top_k otherwise), which equals masking the whole vocabulary first.
// Invariants: the RNG is std::mt19937_64 with our own 53-bit uniform draw, so a seed gives the
// same tokens on every platform and standard library. One Sampler per sequence; not thread-safe.
//   PADDOCK_ASSIGN(auto s, Sampler::create(params, n_vocab));
//   PADDOCK_ASSIGN(int32_t tok, s.sample(logits)); PADDOCK_TRY(s.accept(tok));
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "base/status.h"
#include "sample/grammar_matcher.h"
#include "sample/stages.h"

namespace paddock::sample {

// Ollama's option names and defaults (api.DefaultOptions) plus what OpenAI clients send.
struct SamplerParams {
  float temperature = 0.8f;
  int32_t top_k = 40;
  float top_p = 0.9f;
  float min_p = 0.0f;
  float typical_p = 1.0f;
  int32_t repeat_last_n = 64;   // 0 = off; -1 = every token seen (the engine passes num_ctx's worth)
  float repeat_penalty = 1.0f;  // api.DefaultOptions() of current Ollama
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int64_t seed = -1;                    // < 0: seeded from std::random_device
  std::map<int32_t, float> logit_bias;  // added to the logit; -inf bans the token
  bool logprobs = false;                // fill last_logprobs()
  int32_t top_logprobs = 0;             // alternatives per token, 0..20
};

// Validates ranges (e.g. top_logprobs 0..20, non-negative top_p) against the vocabulary size.
Status validate(const SamplerParams& p, int32_t n_vocab);

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0;
};

// log-softmax of the model's raw logits over the whole vocabulary (what Ollama's runner
// returns): the sampled token's and the best `top_logprobs` alternatives, best first.
struct Logprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};

struct GrammarConstraint {
  std::shared_ptr<const Grammar> grammar;
  std::shared_ptr<const GrammarVocab> vocab;  // size must equal n_vocab
};

class Sampler {
 public:
  static Result<Sampler> create(const SamplerParams& params, int32_t n_vocab,
                                std::optional<GrammarConstraint> grammar = std::nullopt);

  // Picks the next token from logits[n_vocab]. Fails only when a grammar allows no token.
  Result<int32_t> sample(std::span<const float> logits);
  // Records a generated token: penalty window and grammar state. Fails if the grammar rejects it.
  Status accept(int32_t token);
  // Records prompt tokens for the penalty window only (llama.cpp counts the prompt too).
  void accept_prompt(std::span<const int32_t> tokens);

  // Valid after sample() when params.logprobs is set.
  const Logprobs& last_logprobs() const { return logprobs_; }
  // The grammar (if any) is complete: EOG is allowed now.
  bool grammar_complete() const { return !matcher_ || matcher_->can_end(); }
  const SamplerParams& params() const { return params_; }

 private:
  Sampler(const SamplerParams& params, int32_t n_vocab, std::optional<GrammarConstraint> grammar);
  // candidates_ from the logits, adjusted; at most the best `keep` of them (then sorted).
  void build_candidates(std::span<const float> logits, size_t keep);
  // Narrows candidates_ to grammar-allowed tokens, visiting best-first until `need` are found.
  Status apply_grammar(size_t need);
  void fill_logprobs(std::span<const float> logits, int32_t chosen);
  double uniform();  // [0, 1) with 53 random bits

  SamplerParams params_;
  int32_t n_vocab_;
  std::optional<GrammarConstraint> grammar_;
  std::optional<GrammarMatcher> matcher_;
  std::mt19937_64 rng_;
  std::deque<int32_t> window_;   // last repeat_last_n tokens
  std::vector<int32_t> counts_;  // token -> occurrences in window_
  Candidates candidates_;
  std::vector<std::pair<int32_t, float>> changed_;  // ids whose logit bias or penalties change
  std::vector<uint8_t> changed_mask_;               // best_candidates' scratch
  std::vector<uint8_t> mask_;  // grammar-allowed tokens, filled only when the lazy checks fall short
  Logprobs logprobs_;
};

}  // namespace paddock::sample
