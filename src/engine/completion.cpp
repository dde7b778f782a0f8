#include "engine/completion.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "engine/sequence.h"

namespace paddock::engine {

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
  PADDOCK_ASSIGN(std::unique_ptr<Sequence> seq, Sequence::start(model, kv, params, on_piece));
  Sequence* const seqs[] = {seq.get()};
  while (!seq->done()) step(model, seqs);
  return seq->result();
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
