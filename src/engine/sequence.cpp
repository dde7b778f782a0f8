#include "engine/sequence.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

#include "sample/gbnf.h"
#include "sample/json_schema.h"

namespace paddock::engine {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status cancelled_status() { return Status(Code::kCancelled, "generation cancelled"); }

Result<std::optional<sample::GrammarConstraint>> make_grammar(const LoadedModel& m,
                                                              const CompletionParams& p) {
  if (!p.format.empty() && !p.grammar.empty()) {
    return invalid_argument("format and grammar: expected at most one of them, found both");
  }
  std::string gbnf = p.grammar;
  if (p.format == "json") {
    gbnf = sample::json_object_gbnf();
  } else if (!p.format.empty()) {
    PADDOCK_ASSIGN(gbnf, sample::format_to_gbnf(p.format));
  }
  if (gbnf.empty()) return std::optional<sample::GrammarConstraint>();
  PADDOCK_ASSIGN(std::shared_ptr<const sample::Grammar> g, sample::parse_gbnf(gbnf));
  return std::optional<sample::GrammarConstraint>(sample::GrammarConstraint{std::move(g), m.grammar_vocab()});
}

TokenInfo token_info(const Tokenizer& tok, const sample::Logprobs& lp) {
  TokenInfo info{
      .id = lp.chosen.id, .text = tok.piece(lp.chosen.id), .logprob = lp.chosen.logprob, .top = {}};
  info.top.reserve(lp.top.size());
  for (const sample::TokenLogprob& t : lp.top) {
    info.top.push_back(TokenInfo{.id = t.id, .text = tok.piece(t.id), .logprob = t.logprob, .top = {}});
  }
  return info;
}

}  // namespace

Result<std::vector<int32_t>> prompt_tokens(const LoadedModel& model, const CompletionParams& params) {
  std::vector<int32_t> prompt =
      params.tokens.empty()
          ? model.tokenizer().encode(params.prompt, params.add_special, params.parse_special)
          : params.tokens;
  if (prompt.empty()) return invalid_argument("prompt: expected at least one token, found none");
  return prompt;
}

Sequence::Sequence(const LoadedModel& model, KvCache& kv, const CompletionParams& params, PieceFn on_piece,
                   sample::Sampler sampler)
    : model_(model),
      kv_(kv),
      params_(params),
      on_piece_(std::move(on_piece)),
      sampler_(std::move(sampler)),
      detok_(model.tokenizer(), /*special=*/true),
      stops_(params.stop) {}

Result<std::unique_ptr<Sequence>> Sequence::start(const LoadedModel& model, KvCache& kv,
                                                  const CompletionParams& params, PieceFn on_piece) {
  PADDOCK_ASSIGN(std::vector<int32_t> prompt, prompt_tokens(model, params));
  const int64_t n_ctx = kv.n_ctx();
  const size_t whole = prompt.size();
  if (static_cast<int64_t>(prompt.size()) > n_ctx)
    prompt = fit_prompt(std::move(prompt), n_ctx, params.num_keep);
  sample::SamplerParams sp = params.sampling;
  if (sp.repeat_last_n < 0) sp.repeat_last_n = static_cast<int32_t>(n_ctx);  // Ollama: -1 = num_ctx
  PADDOCK_ASSIGN(std::optional<sample::GrammarConstraint> grammar, make_grammar(model, params));
  PADDOCK_ASSIGN(sample::Sampler sampler,
                 sample::Sampler::create(sp, static_cast<int32_t>(model.n_vocab()), std::move(grammar)));
  sampler.accept_prompt(prompt);

  std::unique_ptr<Sequence> s(new Sequence(model, kv, params, std::move(on_piece), std::move(sampler)));
  if (params.thinking_budget) {
    if (params.thinking_budget->max_tokens < 0) {
      return invalid_argument("thinking budget: expected at least 0 tokens, found " +
                              std::to_string(params.thinking_budget->max_tokens));
    }
    s->thinking_.emplace(*params.thinking_budget,
                         model.tokenizer().encode(params.thinking_budget->close, /*add_special=*/false,
                                                  /*parse_special=*/true));
  }
  // Reuse the cached prefix (as Ollama does); the last prompt token is always evaluated,
  // since its logits start decoding.
  const std::span<const int32_t> cached = kv.tokens();
  const size_t limit = std::min(cached.size(), prompt.size() - 1);
  size_t common = 0;
  while (common < limit && cached[common] == prompt[common]) ++common;
  common = static_cast<size_t>(kv.keep(static_cast<int64_t>(common)));  // 0 when a ring lost the cells
  s->evaluated_ = common;
  s->prompt_ = std::move(prompt);
  s->stats_.truncated_tokens = static_cast<int64_t>(whole - s->prompt_.size());
  s->stats_.prompt_eval_count = static_cast<int64_t>(s->prompt_.size());
  s->stats_.prompt_cached_count = static_cast<int64_t>(common);
  return s;
}

bool Sequence::cancelled() const { return params_.is_cancelled && params_.is_cancelled(); }

std::optional<SeqInput> Sequence::next(int64_t max_tokens) {
  if (done_) return std::nullopt;
  if (cancelled()) {
    end(cancelled_status());
    return std::nullopt;
  }
  if (started_ns_ == 0) started_ns_ = now_ns();
  if (prefilling()) {
    const size_t n =
        std::min(static_cast<size_t>(std::max<int64_t>(max_tokens, 1)), prompt_.size() - evaluated_);
    pos_.resize(n);
    for (size_t j = 0; j < n; ++j) pos_[j] = static_cast<int32_t>(kv_.used() + static_cast<int64_t>(j));
    in_flight_ = n;
    const bool last_chunk = evaluated_ + n == prompt_.size();
    return SeqInput{.kv = &kv_,
                    .tokens = std::span(prompt_).subspan(evaluated_, n),
                    .positions = pos_,
                    .outputs = last_chunk ? Outputs::kLast : Outputs::kNone};
  }
  if (kv_.used() >= kv_.n_ctx()) {
    // Context shift: keep the first num_keep tokens, drop half of the rest (Ollama's rule).
    // num_predict -2 asks to stop when the context is full instead.
    const int64_t used = kv_.used();
    const int64_t keep = std::clamp<int64_t>(
        params_.num_keep < 0 ? static_cast<int64_t>(prompt_.size()) : params_.num_keep, 0, used - 1);
    const int64_t discard = (used - keep) / 2;
    if (params_.num_predict == -2 || discard <= 0) {
      finish("length");
      return std::nullopt;
    }
    if (Status st = model_.model().shift(model_.backend(), kv_, keep, discard); !st.is_ok()) {
      end(st);
      return std::nullopt;
    }
  }
  pos_.assign(1, static_cast<int32_t>(kv_.used()));
  return SeqInput{.kv = &kv_, .tokens = std::span(&last_, 1), .positions = pos_, .outputs = Outputs::kLast};
}

void Sequence::advance(std::span<const float> output) {
  if (done_) return;
  if (prefilling()) {
    evaluated_ += in_flight_;
    if (prefilling()) return;
    stats_.prompt_eval_duration_ns = now_ns() - started_ns_;
    decode_start_ns_ = now_ns();
  }
  sample_and_emit(output);
}

void Sequence::fail(Status status) {
  if (!done_) end(std::move(status));
}

bool Sequence::emit(std::string text, bool final) {
  if (text.empty() && !(final && !piece_.logprobs.empty())) return true;
  piece_.text = std::move(text);
  const bool go_on = on_piece_(piece_);
  piece_.logprobs.clear();
  return go_on;
}

// Text goes token -> detokenizer (whole UTF-8 characters) -> stop matcher (holds back
// possible stop-string starts) -> callback; logprobs ride with the text they made.
void Sequence::sample_and_emit(std::span<const float> logits) {
  const Tokenizer& tok = model_.tokenizer();
  if (cancelled()) return end(cancelled_status());
  // A spent thinking budget forces its closing tokens; they bypass the grammar, which
  // constrains what the model writes.
  const bool forced = thinking_ && thinking_->forcing();
  int32_t id = 0;
  if (forced) {
    id = thinking_->next_forced();
    sampler_.accept_prompt(std::span<const int32_t>(&id, 1));
    if (sampler_.params().logprobs)
      piece_.logprobs.push_back(TokenInfo{.id = id, .text = tok.piece(id), .logprob = 0, .top = {}});
  } else {
    const Result<int32_t> sampled = sampler_.sample(logits);
    if (!sampled) return end(sampled.status());
    id = *sampled;
  }
  ++stats_.eval_count;
  if (!forced) {
    if (tok.is_eog(id)) return finish("stop");
    if (Status st = sampler_.accept(id); !st.is_ok()) return end(std::move(st));
    if (sampler_.params().logprobs) piece_.logprobs.push_back(token_info(tok, sampler_.last_logprobs()));
  }
  std::string text = detok_.push(id);
  if (thinking_) thinking_->observe(text, forced);
  text = stops_.push(text);
  if (stops_.stopped()) {
    // The tokens still held back spelled (part of) the stop string: their logprobs go too.
    piece_.logprobs.clear();
    if (!emit(std::move(text), true)) return end(cancelled_status());
    stats_.done_reason = "stop";
    stats_.stop_sequence = stops_.matched();
    stats_.eval_duration_ns = now_ns() - decode_start_ns_;
    done_ = true;
    result_ = stats_;
    return;
  }
  if (!emit(std::move(text), false)) return end(cancelled_status());
  // num_predict > 0 bounds the count; -1 and 0 run on through context shifts, and -2 stops
  // when the context is full (checked in next()). As in Ollama, none goes past 10 x num_ctx.
  const int64_t bound = 10 * kv_.n_ctx();
  const int64_t limit = params_.num_predict > 0 ? std::min(params_.num_predict, bound) : bound;
  if (stats_.eval_count >= limit) return finish("length");
  last_ = id;
}

void Sequence::finish(const std::string& reason) {
  stats_.done_reason = reason;
  std::string tail = stops_.push(detok_.flush());
  if (!stops_.stopped()) {
    tail += stops_.flush();
  } else {
    piece_.logprobs.clear();
    stats_.done_reason = "stop";
    stats_.stop_sequence = stops_.matched();
  }
  if (!emit(std::move(tail), true)) return end(cancelled_status());
  if (decode_start_ns_ != 0) stats_.eval_duration_ns = now_ns() - decode_start_ns_;
  done_ = true;
  result_ = stats_;
}

void Sequence::end(Status status) {
  done_ = true;
  result_ = std::move(status);
}

void step(const LoadedModel& model, std::span<Sequence* const> seqs) {
  std::vector<SeqInput> inputs;
  std::vector<Sequence*> in_batch;
  int64_t budget = model.n_batch();
  // Decode tokens first (one each, they keep streams moving), then prompt chunks.
  for (const bool prefill : {false, true}) {
    for (Sequence* s : seqs) {
      if (s->done() || s->prefilling() != prefill || budget <= 0) continue;
      std::optional<SeqInput> in = s->next(budget);
      if (!in) continue;
      budget -= static_cast<int64_t>(in->tokens.size());
      inputs.push_back(*in);
      in_batch.push_back(s);
    }
  }
  if (inputs.empty()) return;
  Result<std::vector<std::vector<float>>> out =
      model.model().forward_batch(model.backend(), inputs, Head::kLogits);
  for (size_t i = 0; i < in_batch.size(); ++i) {
    if (!out) {
      in_batch[i]->fail(out.status());
    } else {
      in_batch[i]->advance((*out)[i]);
    }
  }
}

}  // namespace paddock::engine
