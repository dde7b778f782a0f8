#include "runner/in_process_runner.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "kv/kv_cache.h"
#include "tokenizer/tokenizer.h"

namespace paddock::runner {

namespace {

Result<int32_t> to_i32(const char* name, int64_t v) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return invalid_argument(std::string(name) + ": expected a 32-bit integer, found " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

TokenLogprob to_runner_logprob(const engine::TokenInfo& t) {
  TokenLogprob out{.token = t.text, .logprob = t.logprob, .bytes = {t.text.begin(), t.text.end()}, .top = {}};
  out.top.reserve(t.top.size());
  for (const engine::TokenInfo& alt : t.top) out.top.push_back(to_runner_logprob(alt));
  return out;
}

class InProcessRunner final : public Runner {
 public:
  InProcessRunner(std::unique_ptr<engine::LoadedModel> model, KvCache kv)
      : model_(std::move(model)), kv_(std::move(kv)) {}

  ModelFacts facts() const override {
    return ModelFacts{
        .context_length = model_->n_ctx(),
        .trained_context_length = model_->n_ctx_train(),
        .has_vision = false,
        .embedding_only = false,
        .memory_bytes = model_->file().bytes().size() + model_->kv_cache_bytes(),
        .device_memory_bytes = 0,
    };
  }

  Status complete(const CompletionRequest& request, const ChunkFn& on_chunk) override {
    if (!request.images.empty()) return unsupported("this model does not support images");
    PADDOCK_ASSIGN(engine::CompletionParams params, to_completion_params(request));
    const Result<engine::CompletionStats> stats =
        engine::complete(*model_, kv_, params, [&on_chunk](const engine::Piece& piece) {
          CompletionChunk chunk;
          chunk.text = piece.text;
          chunk.logprobs.reserve(piece.logprobs.size());
          for (const engine::TokenInfo& t : piece.logprobs) chunk.logprobs.push_back(to_runner_logprob(t));
          return on_chunk(chunk);
        });
    if (!stats) return stats.status();
    CompletionChunk last;
    last.done = true;
    last.done_reason = stats->done_reason;
    last.prompt_eval_count = stats->prompt_eval_count;
    last.prompt_eval_duration_ns = stats->prompt_eval_duration_ns;
    last.eval_count = stats->eval_count;
    last.eval_duration_ns = stats->eval_duration_ns;
    if (!on_chunk(last)) return Status(Code::kCancelled, "generation cancelled");
    return Status::ok();
  }

  Result<std::vector<Embedding>> embed(const std::vector<std::string>& /*texts*/,
                                       bool /*truncate*/) override {
    return unsupported("model does not support embeddings");
  }

  Result<std::vector<int32_t>> tokenize(std::string_view text) override {
    return model_->tokenizer().encode(text, /*add_special=*/false, /*parse_special=*/true);
  }

  Result<std::string> detokenize(std::span<const int32_t> tokens) override {
    const Tokenizer& tok = model_->tokenizer();
    std::string out;
    for (const int32_t id : tokens) {
      if (id < 0 || id >= tok.n_vocab()) {
        return invalid_argument("token id: expected 0.." + std::to_string(tok.n_vocab() - 1) + ", found " +
                                std::to_string(id));
      }
      out += tok.piece(id, /*special=*/true);
    }
    return out;
  }

 private:
  std::unique_ptr<engine::LoadedModel> model_;
  KvCache kv_;
};

}  // namespace

Result<engine::CompletionParams> to_completion_params(const CompletionRequest& request) {
  engine::CompletionParams p;
  p.prompt = request.prompt;
  p.tokens = request.tokens;
  p.format = request.format;
  p.is_cancelled = request.is_cancelled;
  const SamplingOptions& o = request.options;
  sample::SamplerParams& s = p.sampling;
  if (o.temperature) s.temperature = static_cast<float>(*o.temperature);
  if (o.top_p) s.top_p = static_cast<float>(*o.top_p);
  if (o.min_p) s.min_p = static_cast<float>(*o.min_p);
  if (o.typical_p) s.typical_p = static_cast<float>(*o.typical_p);
  if (o.repeat_penalty) s.repeat_penalty = static_cast<float>(*o.repeat_penalty);
  if (o.presence_penalty) s.presence_penalty = static_cast<float>(*o.presence_penalty);
  if (o.frequency_penalty) s.frequency_penalty = static_cast<float>(*o.frequency_penalty);
  // top_k beyond the vocabulary means "all of them"; clamp so it fits the sampler's type.
  if (o.top_k)
    s.top_k = static_cast<int32_t>(std::clamp<int64_t>(*o.top_k, -1, std::numeric_limits<int32_t>::max()));
  if (o.repeat_last_n) {
    PADDOCK_ASSIGN(s.repeat_last_n, to_i32("repeat_last_n", *o.repeat_last_n));
  }
  if (o.seed) s.seed = *o.seed;
  if (o.num_predict) p.num_predict = *o.num_predict;
  if (o.num_keep) p.num_keep = *o.num_keep;
  p.stop = o.stop;
  if (request.top_logprobs < 0 || request.top_logprobs > 20) {
    return invalid_argument("top_logprobs: expected 0..20, found " + std::to_string(request.top_logprobs));
  }
  s.logprobs = request.logprobs || request.top_logprobs > 0;
  s.top_logprobs = request.top_logprobs;
  return p;
}

Result<std::unique_ptr<Runner>> load_in_process(const LoadOptions& load,
                                                const engine::EngineOptions& defaults) {
  if (!load.adapter_paths.empty()) return unsupported("LoRA adapters are not supported yet");
  if (!load.projector_paths.empty()) return unsupported("vision projectors are not supported yet");
  engine::EngineOptions o = defaults;
  if (load.num_ctx > 0) o.num_ctx = load.num_ctx;
  if (load.num_batch && *load.num_batch > 0) o.num_batch = *load.num_batch;
  if (load.num_thread && *load.num_thread > 0) {
    PADDOCK_ASSIGN(o.num_thread, to_i32("num_thread", *load.num_thread));
  }
  PADDOCK_ASSIGN(std::unique_ptr<engine::LoadedModel> model, engine::LoadedModel::load(load.model_path, o));
  PADDOCK_ASSIGN(KvCache kv, model->make_kv_cache());
  return std::unique_ptr<Runner>(std::make_unique<InProcessRunner>(std::move(model), std::move(kv)));
}

RunnerFactory make_in_process_factory(const engine::EngineOptions& defaults) {
  return [defaults](const LoadOptions& load) { return load_in_process(load, defaults); };
}

}  // namespace paddock::runner
