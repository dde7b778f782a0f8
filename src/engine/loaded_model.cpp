#include "engine/loaded_model.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/ref/ref_backend.h"
#include "base/env.h"
#include "base/log.h"
#include "engine/offload.h"
#include "model/hparams.h"
#include "model/registry.h"

namespace paddock::engine {

namespace {

// The ref backend keeps dequantized weights (numbers unchanged) so decode steps do not
// repeat the work; tiny test models fit many times over.
constexpr size_t kRefDequantCacheBytes = size_t{256} << 20;

// OLLAMA_CONTEXT_LENGTH's value, where it is a positive number.
std::optional<int64_t> context_length_setting() {
  const auto env = env_get("CONTEXT_LENGTH");
  if (!env) return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(env->data(), env->data() + env->size(), v);
  if (ec == std::errc() && end == env->data() + env->size() && v > 0) return v;
  return std::nullopt;
}

// The `automatic` resolve_num_ctx takes for a load of `file` with `options`: the GPU's tier
// (engine/offload.h) for the CPU backend's loads; 4096 for ref's, which never offload.
int64_t automatic_num_ctx_of(const gguf::File& file, const HParams& hp, const EngineOptions& options) {
  if (options.backend == BackendKind::kRef || !automatic_context(options.num_ctx)) return kDefaultNumCtx;
  return automatic_num_ctx(file, hp, options);
}

}  // namespace

int64_t resolve_num_batch(int64_t requested, const HParams& hp, int64_t n_ctx) {
  // An encoder's tokens see the whole input, so the input is one pass (llama.cpp wants
  // n_ubatch >= the input; Ollama batches embedding inputs whole).
  if (!hp.causal) return n_ctx;
  return std::min(requested > 0 ? requested : kDefaultNumBatch, n_ctx);
}

bool automatic_context(int64_t requested) { return requested <= 0 && !context_length_setting(); }

int64_t resolve_num_ctx(int64_t requested, int64_t n_ctx_train, int64_t automatic) {
  int64_t n = requested > 0 ? requested : context_length_setting().value_or(automatic);
  if (n_ctx_train > 0) n = std::min(n, n_ctx_train);
  return std::max(n, kMinNumCtx);
}

Result<std::unique_ptr<LoadedModel>> LoadedModel::load(const std::string& path,
                                                       const EngineOptions& options) {
  if (options.num_batch < 0) {
    return invalid_argument("num_batch: expected a positive number, found " +
                            std::to_string(options.num_batch));
  }
  std::unique_ptr<LoadedModel> m(new LoadedModel());
  int64_t automatic = kDefaultNumCtx;  // the context where nothing sets one
  PADDOCK_ASSIGN(m->file_, gguf::File::open(path));
  PADDOCK_ASSIGN(m->tokenizer_, Tokenizer::load(*m->file_));
  if (options.backend == BackendKind::kRef) {
    m->backend_ = make_ref_backend({.dequant_cache_bytes = kRefDequantCacheBytes});
  } else {
    // Placement needs the layer sizes before weights bind; a file whose hyperparameters do
    // not load gets the CPU backend, and load_model's error says why.
    const Result<HParams> hp = arch_hparams(*m->file_);
    if (hp.ok()) {
      automatic = automatic_num_ctx_of(*m->file_, *hp, options);
      PADDOCK_ASSIGN(Offload off, make_offload_backend(
                                      *m->file_, *hp,
                                      resolve_num_ctx(options.num_ctx, hp->n_ctx_train, automatic), options));
      if (off.gpu_found || options.num_gpu) log_info(off.summary);
      m->backend_ = std::move(off.backend);
      m->device_bytes_ = off.device_bytes;
      m->gpu_layers_ = off.gpu_layers;
    } else {
      PADDOCK_ASSIGN(m->backend_, make_cpu_backend(options.num_thread));
    }
  }
  PADDOCK_ASSIGN(m->model_, load_model(*m->file_, *m->backend_));
  // A tokenizer may know more tokens than the embedding has rows (Ollama's gemma3 files add
  // image tokens past them): sampling never yields those, and a prompt holding one fails at
  // the forward pass ("token id ... out of range").
  m->n_ctx_ = resolve_num_ctx(options.num_ctx, m->model_->hparams().n_ctx_train, automatic);
  m->kv_type_ = options.kv_type;
  const HParams& hp = m->model_->hparams();
  m->n_batch_ = resolve_num_batch(options.num_batch, hp, m->n_ctx_);
  if (!kv_type_fits(options.kv_type, hp.head_dim_k, hp.head_dim_v)) {
    if (options.kv_type != DType::kQ8_0 && options.kv_type != DType::kQ4_0) {
      return invalid_argument("KV cache type: expected F16, F32, Q8_0 or Q4_0, found " +
                              std::string(dtype_name(options.kv_type)));
    }
    log_warn("KV cache type " + std::string(dtype_name(options.kv_type)) +
             " needs head dims that are multiples of " +
             std::to_string(dtype_info(options.kv_type).block_size) + " (this model: " +
             std::to_string(hp.head_dim_k) + "/" + std::to_string(hp.head_dim_v) + "); using F16");
    m->kv_type_ = DType::kF16;
  }
  return m;
}

Result<uint64_t> kv_cache_bytes_of(const gguf::File& file, const EngineOptions& options) {
  PADDOCK_ASSIGN(const HParams hp, arch_hparams(file));
  const int64_t n_ctx =
      resolve_num_ctx(options.num_ctx, hp.n_ctx_train, automatic_num_ctx_of(file, hp, options));
  const DType type =
      kv_type_fits(options.kv_type, hp.head_dim_k, hp.head_dim_v) ? options.kv_type : DType::kF16;
  return paddock::kv_cache_bytes(kv_config(hp, n_ctx, type, resolve_num_batch(options.num_batch, hp, n_ctx)));
}

int64_t smaller_automatic_num_ctx(const gguf::File& file, const EngineOptions& options) {
  if (!automatic_context(options.num_ctx)) return 0;
  const Result<HParams> hp = arch_hparams(file);
  if (!hp.ok()) return 0;
  return lower_num_ctx_tier(resolve_num_ctx(0, hp->n_ctx_train, automatic_num_ctx_of(file, *hp, options)));
}

uint64_t LoadedModel::kv_cache_bytes() const {
  return paddock::kv_cache_bytes(kv_config(model_->hparams(), n_ctx_, kv_type_, n_batch_));
}

Result<DType> parse_kv_cache_type(std::string_view name) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.empty() || lower == "f16") return DType::kF16;
  if (lower == "f32") return DType::kF32;
  if (lower == "q8_0") return DType::kQ8_0;
  if (lower == "q4_0") return DType::kQ4_0;
  return invalid_argument("KV cache type: expected f16, f32, q8_0 or q4_0, found \"" + std::string(name) +
                          "\"");
}

Result<KvCache> LoadedModel::make_kv_cache() const {
  return KvCache::create(kv_config(model_->hparams(), n_ctx_, kv_type_, n_batch_), *backend_);
}

Result<std::vector<KvCache>> LoadedModel::make_kv_caches(int64_t n_seq) const {
  return KvCache::create_group(kv_config(model_->hparams(), n_ctx_, kv_type_, n_batch_), n_seq, *backend_);
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
