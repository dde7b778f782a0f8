// The sampler chain's stages as plain functions over a candidate list, with llama.cpp's
// semantics, so each is testable on hand-computed four-element distributions.
// Invariants: stages never empty a non-empty list (at least one candidate is kept); a list
// marked `sorted` is ordered by logit descending, ties by id ascending (deterministic on
// every standard library).
//   Candidates c = ...; top_k(c, 40); top_p(c, 0.9f); temperature(c, 0.8f); softmax(c);
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace paddock::sample {

struct TokenData {
  int32_t id = 0;
  float logit = 0;
  float p = 0;  // valid after softmax()
};

struct Candidates {
  std::vector<TokenData> items;
  bool sorted = false;
};

// The order every stage uses: logit descending, then id ascending.
inline bool better(const TokenData& a, const TokenData& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Whether a logit can be drawn: NaN and -inf (a banned token) never are.
inline bool usable(float logit) { return !std::isnan(logit) && logit != -INFINITY; }

// The best `keep` usable tokens by better(), sorted, into `out`: the logits, with those of
// `changed` ids (each once) replaced. What top_k leaves of every token's candidate, found
// without building those: a block of logits below the worst kept one costs one max.
// `mask`: scratch, all 0 (or empty) before and after.
void best_candidates(std::span<const float> logits, std::span<const std::pair<int32_t, float>> changed,
                     size_t keep, std::vector<uint8_t>& mask, std::vector<TokenData>& out);

void sort_candidates(Candidates& c);
// p = exp(logit - max) / sum, sorting first.
void softmax(Candidates& c);

// llama.cpp penalties for one token seen `count` (> 0) times in the window: a positive logit
// is divided by `repeat`, a negative one multiplied; then OpenAI's
// logit -= count * frequency + presence.
float penalize(float logit, int count, float repeat, float frequency, float presence);

void top_k(Candidates& c, int32_t k);      // k <= 0: no-op
void typical(Candidates& c, float p);      // p >= 1: no-op (locally typical sampling)
void top_p(Candidates& c, float p);        // p >= 1: no-op
void min_p(Candidates& c, float p);        // p <= 0: no-op; keeps logit >= max + log(p)
void temperature(Candidates& c, float t);  // t > 0: logit /= t

// Index into c.items drawn from the softmax distribution with uniform u in [0, 1).
size_t draw(Candidates& c, double u);

}  // namespace paddock::sample
