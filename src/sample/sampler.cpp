#include "sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace paddock::sample {
namespace {

constexpr size_t kLazyChecks = 256;  // best candidates checked one by one before the trie walk

bool finite(float x) { return std::isfinite(x); }

}  // namespace

Status validate(const SamplerParams& p, int32_t n_vocab) {
  if (n_vocab <= 0)
    return invalid_argument("sampler: expected a vocabulary size > 0, found " + std::to_string(n_vocab));
  if (!finite(p.temperature) || !finite(p.top_p) || !finite(p.min_p) || !finite(p.typical_p) ||
      !finite(p.repeat_penalty) || !finite(p.presence_penalty) || !finite(p.frequency_penalty)) {
    return invalid_argument("sampler: expected finite option values, found NaN or infinity");
  }
  if (p.repeat_penalty <= 0) {
    return invalid_argument("sampler: expected repeat_penalty > 0, found " +
                            std::to_string(p.repeat_penalty));
  }
  if (p.repeat_last_n < -1) {
    return invalid_argument("sampler: expected repeat_last_n >= -1, found " +
                            std::to_string(p.repeat_last_n));
  }
  if (p.top_logprobs < 0 || p.top_logprobs > 20) {
    return invalid_argument("top_logprobs must be between 0 and 20");
  }
  for (const auto& [id, bias] : p.logit_bias) {
    if (id < 0 || id >= n_vocab) {
      return invalid_argument("logit_bias: expected token ids in [0, " + std::to_string(n_vocab) +
                              "), found " + std::to_string(id));
    }
    if (std::isnan(bias))
      return invalid_argument("logit_bias: token " + std::to_string(id) + " has a NaN bias");
  }
  return Status::ok();
}

Result<Sampler> Sampler::create(const SamplerParams& params, int32_t n_vocab,
                                std::optional<GrammarConstraint> grammar) {
  PADDOCK_TRY(validate(params, n_vocab));
  if (grammar) {
    if (!grammar->grammar || !grammar->vocab)
      return invalid_argument("sampler: grammar constraint without grammar or vocabulary");
    if (grammar->vocab->size() != n_vocab) {
      return invalid_argument("sampler: grammar vocabulary has " + std::to_string(grammar->vocab->size()) +
                              " tokens, the model " + std::to_string(n_vocab));
    }
  }
  return Sampler(params, n_vocab, std::move(grammar));
}

Sampler::Sampler(const SamplerParams& params, int32_t n_vocab, std::optional<GrammarConstraint> grammar)
    : params_(params),
      n_vocab_(n_vocab),
      grammar_(std::move(grammar)),
      counts_(static_cast<size_t>(n_vocab), 0) {
  if (grammar_) matcher_.emplace(grammar_->grammar);
  const uint64_t seed = params_.seed >= 0 ? static_cast<uint64_t>(params_.seed)
                                          : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  rng_.seed(seed);
}

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

void Sampler::build_candidates(std::span<const float> logits, size_t keep) {
  // The tokens whose logit changes: logit_bias, then the penalties over the biased logit.
  std::vector<std::pair<int32_t, float>>& changed = changed_;
  changed.clear();
  for (const auto& [id, bias] : params_.logit_bias)
    changed.emplace_back(id, logits[static_cast<size_t>(id)] + bias);
  const bool penalties =
      params_.repeat_penalty != 1.0f || params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f;
  if (penalties && !window_.empty()) {
    std::vector<int32_t> seen(window_.begin(), window_.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    const size_t biased = changed.size();
    for (int32_t id : seen) {
      const auto it = std::find_if(changed.begin(), changed.begin() + static_cast<std::ptrdiff_t>(biased),
                                   [&](const auto& c) { return c.first == id; });
      float& l = it != changed.begin() + static_cast<std::ptrdiff_t>(biased)
                     ? it->second
                     : changed.emplace_back(id, logits[static_cast<size_t>(id)]).second;
      l = penalize(l, counts_[static_cast<size_t>(id)], params_.repeat_penalty, params_.frequency_penalty,
                   params_.presence_penalty);
    }
  }
  auto& items = candidates_.items;
  if (keep >= static_cast<size_t>(n_vocab_)) {
    items.resize(static_cast<size_t>(n_vocab_));
    for (int32_t i = 0; i < n_vocab_; ++i)
      items[static_cast<size_t>(i)] = TokenData{i, logits[static_cast<size_t>(i)], 0};
    for (const auto& [id, l] : changed) items[static_cast<size_t>(id)].logit = l;
    std::erase_if(items, [&](const TokenData& t) { return !usable(t.logit); });  // never drawn
    candidates_.sorted = false;
    return;
  }
  best_candidates(logits, changed, keep, changed_mask_, items);
  candidates_.sorted = true;
}

Status Sampler::apply_grammar(size_t need) {
  auto& v = candidates_.items;
  std::vector<TokenData> allowed;
  // Lazy phase: the best kLazyChecks candidates, checked one by one. partial_sort is a heap
  // selection: after the first few hundred, most of the vocabulary fails one comparison
  // with the heap's top, which is several times cheaper than nth_element's partitioning.
  const size_t head = std::min(v.size(), kLazyChecks);
  std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(head), v.end(), better);
  for (size_t i = 0; i < head && allowed.size() < need; ++i) {
    if (matcher_->allows_token(*grammar_->vocab, v[i].id)) allowed.push_back(v[i]);
  }
  // Few allowed tokens among the best ones (e.g. JSON punctuation): one trie walk over the
  // vocabulary answers the rest, and only the allowed remainder gets sorted.
  if (allowed.size() < need && head < v.size()) {
    matcher_->allowed_tokens(*grammar_->vocab, &mask_);
    std::vector<TokenData> rest;
    for (size_t i = head; i < v.size(); ++i) {
      if (mask_[static_cast<size_t>(v[i].id)]) rest.push_back(v[i]);
    }
    const size_t take = std::min(rest.size(), need - allowed.size());
    std::partial_sort(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(take), rest.end(), better);
    allowed.insert(allowed.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(take));
  }
  if (allowed.empty()) {
    return invalid_argument("grammar: no token of the vocabulary can continue the output here");
  }
  v = std::move(allowed);
  candidates_.sorted = true;
  return Status::ok();
}

Result<int32_t> Sampler::sample(std::span<const float> logits) {
  if (logits.size() != static_cast<size_t>(n_vocab_)) {
    return invalid_argument("sampler: expected " + std::to_string(n_vocab_) + " logits, found " +
                            std::to_string(logits.size()));
  }
  const bool greedy = params_.temperature <= 0;
  // Without a grammar the chain starts with top_k (greedy: the best one): only those are built.
  size_t keep = SIZE_MAX;
  if (!matcher_ && (greedy || params_.top_k > 0)) keep = greedy ? 1 : static_cast<size_t>(params_.top_k);
  build_candidates(logits, keep);
  if (candidates_.items.empty())
    return invalid_argument("sampler: every token is banned (logit_bias or NaN logits)");
  if (matcher_) {
    const size_t need = greedy ? 1 : params_.top_k > 0 ? static_cast<size_t>(params_.top_k) : SIZE_MAX;
    PADDOCK_TRY(apply_grammar(need));
  }
  int32_t chosen = 0;
  if (greedy) {
    chosen = std::min_element(candidates_.items.begin(), candidates_.items.end(), better)->id;
  } else {
    top_k(candidates_, params_.top_k);
    typical(candidates_, params_.typical_p);
    top_p(candidates_, params_.top_p);
    min_p(candidates_, params_.min_p);
    temperature(candidates_, params_.temperature);
    chosen = candidates_.items[draw(candidates_, uniform())].id;
  }
  if (params_.logprobs) fill_logprobs(logits, chosen);
  return chosen;
}

void Sampler::fill_logprobs(std::span<const float> logits, int32_t chosen) {
  float max_logit = -INFINITY;
  for (float l : logits) max_logit = std::max(max_logit, l);
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max_logit);
  const double lse = max_logit + std::log(sum);
  auto lp = [&](int32_t id) { return static_cast<float>(logits[static_cast<size_t>(id)] - lse); };
  logprobs_.chosen = TokenLogprob{chosen, lp(chosen)};
  logprobs_.top.clear();
  const auto n = static_cast<size_t>(std::min(params_.top_logprobs, n_vocab_));
  if (n == 0) return;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                    [&](int32_t a, int32_t b) {
                      const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
                      return la > lb || (la == lb && a < b);
                    });
  for (size_t i = 0; i < n; ++i) logprobs_.top.push_back(TokenLogprob{ids[i], lp(ids[i])});
}

Status Sampler::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_) {
    return invalid_argument("sampler: expected a token id in [0, " + std::to_string(n_vocab_) + "), found " +
                            std::to_string(token));
  }
  if (matcher_) PADDOCK_TRY(matcher_->accept_token(*grammar_->vocab, token));
  accept_prompt(std::span<const int32_t>(&token, 1));
  return Status::ok();
}

void Sampler::accept_prompt(std::span<const int32_t> tokens) {
  if (params_.repeat_last_n == 0) return;
  for (int32_t t : tokens) {
    if (t < 0 || t >= n_vocab_) continue;
    window_.push_back(t);
    ++counts_[static_cast<size_t>(t)];
    if (params_.repeat_last_n > 0 && window_.size() > static_cast<size_t>(params_.repeat_last_n)) {
      --counts_[static_cast<size_t>(window_.front())];
      window_.pop_front();
    }
  }
}

}  // namespace paddock::sample
