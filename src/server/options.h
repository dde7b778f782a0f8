// Request `options` and the model's PARAMETERs -> the Runner's sampling and load settings.
// Request options override model parameters key by key (Ollama's api.Options.FromMap):
// unknown keys are ignored with one warning per request, a value of the wrong type is a 400
// ("option \"top_k\" must be of type integer"). Resource options are then clamped to the
// limits below (docs/security.md): num_thread to the machine's CPUs, num_ctx, num_batch,
// num_gpu, num_keep and top_k to sane ranges.
//   PADDOCK_ASSIGN(EffectiveOptions o, effective_options(model.params, request.options));
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "runner/runner.h"
#include "store/params.h"

namespace paddock::server {

// num_ctx at least Ollama's minimum of 4 and at most 16 Mi tokens (beyond any model's
// trained context, which the engine clamps to); num_batch at most num_ctx.
inline constexpr int64_t kMinNumCtx = 4;
inline constexpr int64_t kMaxNumCtx = int64_t{1} << 24;
// More layers than any model has; the engine offloads min(num_gpu, layers + 1).
inline constexpr int64_t kMaxNumGpu = 4096;
// Larger than any vocabulary; top_k beyond the vocabulary keeps every token.
inline constexpr int64_t kMaxTopK = int64_t{1} << 22;

struct EffectiveOptions {
  runner::SamplingOptions sampling;
  int64_t num_ctx = 0;  // 0 = model/engine default
  std::optional<int64_t> num_batch, num_thread, num_gpu;
};

Result<EffectiveOptions> effective_options(const store::Params& model_params,
                                           const nlohmann::ordered_json& request);

}  // namespace paddock::server
