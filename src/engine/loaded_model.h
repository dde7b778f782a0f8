// A model ready to generate with: the mapped GGUF file, its tokenizer, the model's weights
// bound in place, and the backend that runs them, plus the load-time settings (context
// size, batch size, KV cache type). Immutable after load except for the backend's internal
// scratch and the grammar vocabulary (built once, under a lock), so one forward pass runs
// at a time per LoadedModel; several completions, each with its own KvCache, share those
// passes as engine::Sequences (sequence.h).
//   PADDOCK_ASSIGN(auto m, LoadedModel::load("stories260K.gguf", {.backend = BackendKind::kRef}));
//   PADDOCK_ASSIGN(KvCache kv, m->make_kv_cache());
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "sample/grammar_matcher.h"
#include "tokenizer/tokenizer.h"

namespace paddock::engine {

// Ollama's CPU default (reference ollama.md: 4096 below 23 GiB of VRAM; a GPU's memory raises
// it, engine/offload.h automatic_num_ctx), clamped to the model's trained context;
// OLLAMA_CONTEXT_LENGTH / PADDOCK_CONTEXT_LENGTH overrides it.
inline constexpr int64_t kDefaultNumCtx = 4096;
inline constexpr int64_t kMinNumCtx = 4;  // Ollama clamps num_ctx to at least 4
inline constexpr int64_t kDefaultNumBatch = 512;

enum class BackendKind {
  kCpu,  // the optimised CPU backend
  kRef,  // the scalar oracle (tests, golden checks)
};

struct EngineOptions {
  int64_t num_ctx = 0;    // 0 = the env override, else automatic_num_ctx; clamped to the trained context
  int64_t num_batch = 0;  // 0 = kDefaultNumBatch; prompt tokens per forward pass
  int num_thread = 0;     // cpu backend threads; 0 = one per physical core (base/cpu_count.h)
  BackendKind backend = BackendKind::kCpu;
  // F16, F32, Q8_0 or Q4_0 (OLLAMA_KV_CACHE_TYPE, see parse_kv_cache_type). A block type
  // the model's head dims do not fit falls back to F16 with a warning, as Ollama does.
  DType kv_type = DType::kF16;
  // Ollama's num_gpu: layers on the GPU (the output counted after the repeating ones); unset
  // or negative = as many as fit, 0 = none (engine/offload.h). kCpu only.
  std::optional<int64_t> num_gpu;
  int64_t num_parallel = 1;  // KV caches the runner will make: counted when fitting the GPU
};

// OLLAMA_KV_CACHE_TYPE values: "" or "f16" -> F16, "f32", "q8_0", "q4_0" (case-insensitive);
// anything else is kInvalidArgument naming the accepted values.
Result<DType> parse_kv_cache_type(std::string_view name);

class LoadedModel {
 public:
  // Opens (mmaps) and validates the file, loads tokenizer and weights, creates the backend.
  static Result<std::unique_ptr<LoadedModel>> load(const std::string& path, const EngineOptions& options);

  const gguf::File& file() const { return *file_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const Model& model() const { return *model_; }
  Backend& backend() const { return *backend_; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_batch() const { return n_batch_; }
  int64_t n_vocab() const { return model_->hparams().n_vocab; }
  int64_t n_ctx_train() const { return model_->hparams().n_ctx_train; }
  DType kv_type() const { return kv_type_; }
  // Weights and KV cells on the GPU (0 without one) and the layers there, as num_gpu counts.
  uint64_t device_bytes() const { return device_bytes_; }
  int64_t gpu_layers() const { return gpu_layers_; }
  // Bytes of one KV cache of n_ctx() cells.
  uint64_t kv_cache_bytes() const;
  Result<KvCache> make_kv_cache() const;
  // n_seq caches for the sequences batched together (KvCache::create_group: one attention
  // call per layer serves them all).
  Result<std::vector<KvCache>> make_kv_caches(int64_t n_seq) const;

  // The vocabulary as grammars see it (token pieces, EOG ids), built on first use and shared.
  std::shared_ptr<const sample::GrammarVocab> grammar_vocab() const;

 private:
  LoadedModel() = default;

  std::unique_ptr<gguf::File> file_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Model> model_;  // declared after backend_: destroyed first
  int64_t n_ctx_ = 0;
  int64_t n_batch_ = 0;
  DType kv_type_ = DType::kF16;
  uint64_t device_bytes_ = 0;
  int64_t gpu_layers_ = 0;
  mutable std::mutex grammar_vocab_mu_;
  mutable std::shared_ptr<const sample::GrammarVocab> grammar_vocab_;
};

// The context size a load with `requested` (0 = default) gets for a model trained on
// `n_ctx_train` tokens (0 = unknown): Ollama's rules, see kDefaultNumCtx; `automatic` where
// neither `requested` nor OLLAMA_CONTEXT_LENGTH sets one.
int64_t resolve_num_ctx(int64_t requested, int64_t n_ctx_train, int64_t automatic = kDefaultNumCtx);
// Whether resolve_num_ctx takes its `automatic` for `requested`.
bool automatic_context(int64_t requested);
// The most tokens one pass takes (num_batch, 0 = kDefaultNumBatch, at most n_ctx; an
// encoder's whole input), which also sizes the windowed layers' KV rings.
int64_t resolve_num_batch(int64_t requested, const HParams& hp, int64_t n_ctx);
// The KV cache bytes of one sequence as LoadedModel::load would allocate them for `file` with
// `options` (num_ctx, num_batch, kv_type and num_parallel; windowed layers as their rings; a
// KV type the head dims do not fit falls back to F16), for the scheduler's estimate. Fails
// where the architecture's hyperparameters do not load.
Result<uint64_t> kv_cache_bytes_of(const gguf::File& file, const EngineOptions& options);
// The context a load of `file` that ran out of memory at its automatic context (options'
// num_ctx unset) tries once more with, as Ollama does: the tier below the one it took (see
// engine/offload.h); 0 where the context is set, already 4096 or less, or not sizable.
int64_t smaller_automatic_num_ctx(const gguf::File& file, const EngineOptions& options);

}  // namespace paddock::engine
