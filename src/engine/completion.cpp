#include "engine/completion.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "engine/stop_strings.h"
#include "sample/gbnf.h"
#include "sample/json_schema.h"
#include "tokenizer/tokenizer.h"

namespace paddock::engine {

namespace {

using Clock = std::chrono::steady_clock;

int64_t ns_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

Status cancelled() { return Status(Code::kCancelled, "generation cancelled"); }

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

// Prefills the prompt in batches of n_batch, polling for cancellation before each; returns
// the last token's logits.
Result<std::vector<float>> prefill(const LoadedModel& m, KvCache& kv, std::span<const int32_t> prompt,
                                   const std::function<bool()>& is_cancelled) {
  std::vector<float> logits;
  std::vector<int32_t> positions;
  for (size_t i = 0; i < prompt.size();) {
    if (is_cancelled()) return cancelled();
    const size_t n = std::min(static_cast<size_t>(m.n_batch()), prompt.size() - i);
    positions.resize(n);
    for (size_t j = 0; j < n; ++j) positions[j] = static_cast<int32_t>(kv.used() + static_cast<int64_t>(j));
    PADDOCK_ASSIGN(logits, m.model().forward(m.backend(), kv, prompt.subspan(i, n), positions, false));
    i += n;
  }
  return logits;
}

}  // namespace

sample::SamplerParams default_sampler_params() {
  sample::SamplerParams p;
  p.repeat_penalty = 1.0f;
  return p;
}

std::vector<int32_t> fit_prompt(std::vector<int32_t> tokens, int64_t n_ctx, int64_t num_keep) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n <= n_ctx) return tokens;
  const int64_t keep = std::clamp<int64_t>(num_keep < 0 ? n_ctx - 1 : num_keep, 0, n_ctx - 1);
  const int64_t discard = n - n_ctx;
  tokens.erase(tokens.begin() + keep, tokens.begin() + keep + discard);
  return tokens;
}

Result<CompletionStats> complete(const LoadedModel& model, KvCache& kv, const CompletionParams& params,
                                 const PieceFn& on_piece) {
  const Tokenizer& tok = model.tokenizer();
  const auto is_cancelled = [&params] { return params.is_cancelled && params.is_cancelled(); };
  CompletionStats st;

  std::vector<int32_t> prompt = params.tokens.empty()
                                    ? tok.encode(params.prompt, params.add_special, params.parse_special)
                                    : params.tokens;
  if (prompt.empty()) return invalid_argument("prompt: expected at least one token, found none");
  const int64_t n_ctx = kv.n_ctx();
  if (static_cast<int64_t>(prompt.size()) > n_ctx) {
    prompt = fit_prompt(std::move(prompt), n_ctx, params.num_keep);
    st.truncated = true;
  }

  sample::SamplerParams sp = params.sampling;
  if (sp.repeat_last_n < 0) sp.repeat_last_n = static_cast<int32_t>(n_ctx);  // Ollama: -1 = num_ctx
  PADDOCK_ASSIGN(std::optional<sample::GrammarConstraint> grammar, make_grammar(model, params));
  PADDOCK_ASSIGN(sample::Sampler sampler,
                 sample::Sampler::create(sp, static_cast<int32_t>(model.n_vocab()), std::move(grammar)));
  sampler.accept_prompt(prompt);

  kv.clear();
  const Clock::time_point prefill_start = Clock::now();
  PADDOCK_ASSIGN(std::vector<float> logits, prefill(model, kv, prompt, is_cancelled));
  st.prompt_eval_count = static_cast<int64_t>(prompt.size());
  st.prompt_eval_duration_ns = ns_since(prefill_start);

  // Decode. Text goes token -> detokenizer (whole UTF-8 characters) -> stop matcher (holds
  // back possible stop-string starts) -> callback; logprobs ride with the text they made.
  const Clock::time_point decode_start = Clock::now();
  StreamingDetokenizer detok(tok, /*special=*/true);
  StopMatcher stops(params.stop);
  Piece piece;
  const auto emit = [&](std::string text, bool final) {
    if (text.empty() && !(final && !piece.logprobs.empty())) return true;
    piece.text = std::move(text);
    const bool go_on = on_piece(piece);
    piece.logprobs.clear();
    return go_on;
  };
  const int64_t limit = params.num_predict > 0 ? params.num_predict : std::numeric_limits<int64_t>::max();
  for (;;) {
    if (is_cancelled()) return cancelled();
    PADDOCK_ASSIGN(const int32_t id, sampler.sample(logits));
    ++st.eval_count;
    if (tok.is_eog(id)) {
      st.done_reason = "stop";
      break;
    }
    PADDOCK_TRY(sampler.accept(id));
    if (sp.logprobs) piece.logprobs.push_back(token_info(tok, sampler.last_logprobs()));
    std::string text = stops.push(detok.push(id));
    if (stops.stopped()) {
      // The tokens still held back spelled (part of) the stop string: their logprobs go too.
      piece.logprobs.clear();
      if (!emit(std::move(text), true)) return cancelled();
      st.done_reason = "stop";
      st.eval_duration_ns = ns_since(decode_start);
      return st;
    }
    if (!emit(std::move(text), false)) return cancelled();
    if (st.eval_count >= limit || kv.used() >= n_ctx) {
      st.done_reason = "length";
      break;
    }
    const int32_t pos[1] = {static_cast<int32_t>(kv.used())};
    const int32_t ids[1] = {id};
    PADDOCK_ASSIGN(logits, model.model().forward(model.backend(), kv, ids, pos, false));
  }

  std::string tail = stops.push(detok.flush());
  if (!stops.stopped()) {
    tail += stops.flush();
  } else {
    piece.logprobs.clear();
    st.done_reason = "stop";
  }
  if (!emit(std::move(tail), true)) return cancelled();
  st.eval_duration_ns = ns_since(decode_start);
  return st;
}

Result<std::string> generate(const LoadedModel& model, std::string_view prompt,
                             const CompletionParams& params,
                             const std::function<bool(std::string_view)>& on_text) {
  CompletionParams p = params;
  p.prompt = std::string(prompt);
  p.tokens.clear();
  PADDOCK_ASSIGN(KvCache kv, model.make_kv_cache());
  std::string out;
  const Result<CompletionStats> stats = complete(model, kv, p, [&](const Piece& piece) {
    out += piece.text;
    return !on_text || on_text(piece.text);
  });
  if (!stats) return stats.status();
  return out;
}

}  // namespace paddock::engine
