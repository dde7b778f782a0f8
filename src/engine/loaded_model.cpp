#include "engine/loaded_model.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/ref/ref_backend.h"
#include "base/env.h"
#include "model/registry.h"

namespace paddock::engine {

namespace {

// The ref backend keeps dequantized weights (numbers unchanged) so decode steps do not
// repeat the work; tiny test models fit many times over.
constexpr size_t kRefDequantCacheBytes = size_t{256} << 20;

Result<std::unique_ptr<Backend>> make_backend(const EngineOptions& o) {
  if (o.backend == BackendKind::kRef) return make_ref_backend({.dequant_cache_bytes = kRefDequantCacheBytes});
  return make_cpu_backend(o.num_thread);
}

}  // namespace

int64_t resolve_num_ctx(int64_t requested, int64_t n_ctx_train) {
  int64_t n = requested;
  if (n <= 0) {
    n = kDefaultNumCtx;
    if (const auto env = env_get("CONTEXT_LENGTH")) {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(env->data(), env->data() + env->size(), v);
      if (ec == std::errc() && end == env->data() + env->size() && v > 0) n = v;
    }
  }
  if (n_ctx_train > 0) n = std::min(n, n_ctx_train);
  return std::max(n, kMinNumCtx);
}

Result<std::unique_ptr<LoadedModel>> LoadedModel::load(const std::string& path,
                                                       const EngineOptions& options) {
  if (options.num_batch < 0) {
    return invalid_argument("num_batch: expected a positive number, found " +
                            std::to_string(options.num_batch));
  }
  if (options.kv_type != DType::kF16 && options.kv_type != DType::kF32) {
    return invalid_argument("KV cache type: expected F16 or F32");
  }
  std::unique_ptr<LoadedModel> m(new LoadedModel());
  PADDOCK_ASSIGN(m->file_, gguf::File::open(path));
  PADDOCK_ASSIGN(m->tokenizer_, Tokenizer::load(*m->file_));
  PADDOCK_ASSIGN(m->backend_, make_backend(options));
  PADDOCK_ASSIGN(m->model_, load_model(*m->file_, *m->backend_));
  if (m->tokenizer_->n_vocab() > m->model_->hparams().n_vocab) {
    return corrupt(path + ": the tokenizer has " + std::to_string(m->tokenizer_->n_vocab()) +
                   " tokens but the model's embedding only " + std::to_string(m->model_->hparams().n_vocab));
  }
  m->n_ctx_ = resolve_num_ctx(options.num_ctx, m->model_->hparams().n_ctx_train);
  m->n_batch_ = std::min(options.num_batch > 0 ? options.num_batch : kDefaultNumBatch, m->n_ctx_);
  m->kv_type_ = options.kv_type;
  return m;
}

uint64_t LoadedModel::kv_cache_bytes() const {
  const KvCacheConfig c = model_->kv_config(n_ctx_, kv_type_);
  const uint64_t elem = kv_type_ == DType::kF32 ? 4 : 2;
  return static_cast<uint64_t>(c.n_layer) * static_cast<uint64_t>(c.n_ctx) *
         static_cast<uint64_t>(c.n_head_kv) * static_cast<uint64_t>(c.head_dim_k + c.head_dim_v) * elem;
}

Result<KvCache> LoadedModel::make_kv_cache() const {
  return KvCache::create(model_->kv_config(n_ctx_, kv_type_));
}

std::shared_ptr<const sample::GrammarVocab> LoadedModel::grammar_vocab() const {
  const std::lock_guard<std::mutex> lock(grammar_vocab_mu_);
  if (!grammar_vocab_) {
    // Sized to the logits (the model's vocabulary); ids the tokenizer lacks get "". Control
    // tokens get "" too (special=false), which grammars reject, so "<|eot_id|>" can never
    // appear as literal text inside structured output.
    const auto n = static_cast<int32_t>(n_vocab());
    std::vector<std::string> pieces(static_cast<size_t>(n));
    std::vector<int32_t> eog;
    for (int32_t id = 0; id < n; ++id) {
      pieces[static_cast<size_t>(id)] = tokenizer_->piece(id, /*special=*/false);
      if (tokenizer_->is_eog(id)) eog.push_back(id);
    }
    grammar_vocab_ = std::make_shared<const sample::GrammarVocab>(std::move(pieces), eog);
  }
  return grammar_vocab_;
}

}  // namespace paddock::engine
