#include "runner/in_process_runner.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "base/env.h"
#include "base/log.h"
#include "engine/embedding.h"
#include "engine/sequence.h"
#include "kv/kv_cache.h"
#include "tokenizer/tokenizer.h"

namespace paddock::runner {

namespace {

// Each slot holds a KV cache of num_ctx cells; this bounds a typo'd setting's memory.
constexpr int64_t kMaxParallel = 64;

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

// One complete() call in flight: pieces go from the batching thread to the caller's thread
// through this queue, so a slow client never stalls the other sequences' steps.
struct Job {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<engine::Piece> pieces;
  bool finished = false;
  Result<engine::CompletionStats> result = engine::CompletionStats{};
  std::atomic<bool> cancelled{false};
};

struct Active {
  std::unique_ptr<engine::Sequence> seq;
  std::shared_ptr<Job> job;
};

CompletionChunk to_chunk(const engine::Piece& piece) {
  CompletionChunk chunk;
  chunk.text = piece.text;
  chunk.logprobs.reserve(piece.logprobs.size());
  for (const engine::TokenInfo& t : piece.logprobs) chunk.logprobs.push_back(to_runner_logprob(t));
  return chunk;
}

class InProcessRunner final : public Runner {
 public:
  InProcessRunner(std::unique_ptr<engine::LoadedModel> model, std::vector<KvCache> slots)
      : model_(std::move(model)), slots_(std::move(slots)), busy_(slots_.size(), false) {
    batcher_ = std::thread([this] { batch_loop(); });
  }

  ~InProcessRunner() override {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    batcher_.join();
  }

  ModelFacts facts() const override {
    return ModelFacts{
        .context_length = model_->n_ctx(),
        .trained_context_length = model_->n_ctx_train(),
        .has_vision = false,
        .embedding_only = false,
        .memory_bytes = model_->file().bytes().size() + model_->kv_cache_bytes() * slots_.size(),
        .device_memory_bytes = model_->device_bytes(),
    };
  }

  Status complete(const CompletionRequest& request, const ChunkFn& on_chunk) override {
    if (!request.images.empty()) return unsupported("this model does not support images");
    PADDOCK_ASSIGN(engine::CompletionParams params, to_completion_params(request));
    PADDOCK_ASSIGN(params.tokens, engine::prompt_tokens(*model_, params));
    auto job = std::make_shared<Job>();
    params.is_cancelled = [job, user = request.is_cancelled] { return job->cancelled || (user && user()); };
    const size_t slot = acquire_slot(params.tokens);
    Result<std::unique_ptr<engine::Sequence>> seq =
        engine::Sequence::start(*model_, slots_[slot], params, [job](const engine::Piece& piece) {
          {
            const std::lock_guard<std::mutex> lock(job->mu);
            job->pieces.push_back(piece);
          }
          job->cv.notify_all();
          return !job->cancelled;
        });
    if (!seq) {
      release_slot(slot);
      return seq.status();
    }
    {
      const std::lock_guard<std::mutex> lock(mu_);
      incoming_.push_back(Active{std::move(seq).value(), job});
    }
    work_cv_.notify_all();

    // Deliver pieces on this thread until the sequence is done.
    for (;;) {
      std::deque<engine::Piece> pieces;
      bool finished = false;
      {
        std::unique_lock<std::mutex> lock(job->mu);
        job->cv.wait(lock, [&] { return !job->pieces.empty() || job->finished; });
        pieces.swap(job->pieces);
        finished = job->finished;
      }
      for (const engine::Piece& piece : pieces) {
        if (!job->cancelled && !on_chunk(to_chunk(piece))) job->cancelled = true;
      }
      if (finished) break;
    }
    release_slot(slot);
    if (job->cancelled) return Status(Code::kCancelled, "generation cancelled");
    const Result<engine::CompletionStats>& stats = job->result;
    if (!stats) return stats.status();
    CompletionChunk last;
    last.done = true;
    last.done_reason = stats->done_reason;
    last.prompt_eval_count = stats->prompt_eval_count;
    last.prompt_cached_count = stats->prompt_cached_count;
    last.prompt_eval_duration_ns = stats->prompt_eval_duration_ns;
    last.eval_count = stats->eval_count;
    last.eval_duration_ns = stats->eval_duration_ns;
    last.truncated_tokens = stats->truncated_tokens;
    last.stop_sequence = stats->stop_sequence;
    if (!on_chunk(last)) return Status(Code::kCancelled, "generation cancelled");
    return Status::ok();
  }

  Result<std::vector<Embedding>> embed(const std::vector<std::string>& texts, bool truncate) override {
    const Tokenizer& tok = model_->tokenizer();
    std::vector<std::vector<int32_t>> inputs;
    for (const std::string& text : texts) {
      std::vector<int32_t> ids = tok.encode(text, /*add_special=*/true, /*parse_special=*/true);
      if (static_cast<int64_t>(ids.size()) > model_->n_ctx()) {
        if (!truncate) {
          return invalid_argument(
              context_exceeded_message(static_cast<int64_t>(ids.size()), model_->n_ctx()));
        }
        ids = engine::truncate_input(std::move(ids), model_->n_ctx(), tok);
      }
      inputs.push_back(std::move(ids));
    }
    const size_t slot = acquire_slot({});
    std::vector<Embedding> out;
    Status status = Status::ok();
    for (const std::vector<int32_t>& ids : inputs) {
      const std::lock_guard<std::mutex> lock(forward_mu_);
      Result<std::vector<float>> e = engine::embed(*model_, slots_[slot], ids);
      if (!e) {
        status = e.status();
        break;
      }
      out.push_back(
          Embedding{.values = std::move(e).value(), .prompt_tokens = static_cast<int64_t>(ids.size())});
    }
    release_slot(slot);
    if (!status.is_ok()) return status;
    return out;
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
  // Waits for a free slot; prefers the one whose cache shares the longest prefix with
  // `prompt` (Ollama's slot choice), so a follow-up request reuses its conversation.
  size_t acquire_slot(std::span<const int32_t> prompt) {
    std::unique_lock<std::mutex> lock(mu_);
    slot_cv_.wait(lock, [&] { return std::find(busy_.begin(), busy_.end(), false) != busy_.end(); });
    size_t best = busy_.size();
    size_t best_len = 0;
    for (size_t i = 0; i < busy_.size(); ++i) {
      if (busy_[i]) continue;
      const std::span<const int32_t> cached = slots_[i].tokens();
      size_t n = 0;
      while (n < cached.size() && n < prompt.size() && cached[n] == prompt[n]) ++n;
      if (best == busy_.size() || n > best_len) {
        best = i;
        best_len = n;
      }
    }
    busy_[best] = true;
    return best;
  }

  void release_slot(size_t slot) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      busy_[slot] = false;
    }
    slot_cv_.notify_one();
  }

  // The one thread that runs forward passes for completions: new sequences join between
  // steps, finished ones leave.
  void batch_loop() {
    std::vector<Active> active;
    std::vector<engine::Sequence*> seqs;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stop_ || !incoming_.empty() || !active.empty(); });
        if (stop_ && incoming_.empty() && active.empty()) return;
        for (Active& a : incoming_) active.push_back(std::move(a));
        incoming_.clear();
      }
      seqs.clear();
      for (const Active& a : active) seqs.push_back(a.seq.get());
      {
        const std::lock_guard<std::mutex> lock(forward_mu_);
        engine::step(*model_, seqs);
      }
      for (auto it = active.begin(); it != active.end();) {
        if (!it->seq->done()) {
          ++it;
          continue;
        }
        {
          const std::lock_guard<std::mutex> lock(it->job->mu);
          it->job->result = it->seq->result();
          it->job->finished = true;
        }
        it->job->cv.notify_all();
        it = active.erase(it);
      }
    }
  }

  std::unique_ptr<engine::LoadedModel> model_;
  std::vector<KvCache> slots_;
  std::mutex mu_;  // guards busy_, incoming_, stop_
  std::condition_variable slot_cv_;
  std::condition_variable work_cv_;
  std::vector<bool> busy_;
  std::vector<Active> incoming_;
  bool stop_ = false;
  std::mutex forward_mu_;  // one forward pass at a time on the backend (batches and embeddings)
  std::thread batcher_;    // last: started after everything it uses exists
};

}  // namespace

Result<engine::CompletionParams> to_completion_params(const CompletionRequest& request) {
  engine::CompletionParams p;
  p.prompt = request.prompt;
  p.tokens = request.tokens;
  p.format = request.format;
  p.grammar = request.grammar;
  if (const auto& b = request.thinking_budget) {
    p.thinking_budget = engine::ThinkingBudget{
        .max_tokens = b->max_tokens, .open = b->open, .close = b->close, .starts_inside = b->starts_inside};
  }
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

Result<engine::EngineOptions> engine_options(const LoadOptions& load, const engine::EngineOptions& defaults) {
  engine::EngineOptions o = defaults;
  if (load.num_ctx > 0) o.num_ctx = load.num_ctx;
  if (load.num_batch && *load.num_batch > 0) o.num_batch = *load.num_batch;
  if (load.num_thread && *load.num_thread > 0) {
    PADDOCK_ASSIGN(o.num_thread, to_i32("num_thread", *load.num_thread));
  }
  o.num_gpu = load.num_gpu;
  o.num_parallel = load.num_parallel;
  if (load.num_parallel < 1 || load.num_parallel > kMaxParallel) {
    return invalid_argument("num_parallel: expected 1.." + std::to_string(kMaxParallel) + ", found " +
                            std::to_string(load.num_parallel));
  }
  return o;
}

Result<std::unique_ptr<Runner>> load_in_process(const LoadOptions& load,
                                                const engine::EngineOptions& defaults) {
  if (!load.adapter_paths.empty()) return unsupported("LoRA adapters are not supported yet");
  if (!load.projector_paths.empty()) return unsupported("vision projectors are not supported yet");
  PADDOCK_ASSIGN(engine::EngineOptions o, engine_options(load, defaults));
  if (const std::optional<std::string> env = env_get("KV_CACHE_TYPE"); env && !env->empty()) {
    const Result<DType> t = engine::parse_kv_cache_type(*env);
    if (t) {
      o.kv_type = *t;
    } else {
      log_warn(t.status().message() + "; using f16");  // Ollama also falls back to f16
    }
  }
  PADDOCK_ASSIGN(std::unique_ptr<engine::LoadedModel> model, engine::LoadedModel::load(load.model_path, o));
  PADDOCK_ASSIGN(std::vector<KvCache> slots, model->make_kv_caches(load.num_parallel));
  return std::unique_ptr<Runner>(std::make_unique<InProcessRunner>(std::move(model), std::move(slots)));
}

RunnerFactory make_in_process_factory(const engine::EngineOptions& defaults) {
  return [defaults](const LoadOptions& load) { return load_in_process(load, defaults); };
}

}  // namespace paddock::runner
