// Request `options` and the model's PARAMETERs -> the Runner's sampling and load settings.
// Request options override model parameters key by key (Ollama's api.Options.FromMap):
// unknown keys are ignored with one warning per request, a value of the wrong type is a 400
// ("option \"top_k\" must be of type integer").
//   PADDOCK_ASSIGN(EffectiveOptions o, effective_options(model.params, request.options));
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "runner/runner.h"
#include "store/params.h"

namespace paddock::server {

struct EffectiveOptions {
  runner::SamplingOptions sampling;
  int64_t num_ctx = 0;  // 0 = model/engine default
  std::optional<int64_t> num_batch, num_thread, num_gpu;
};

Result<EffectiveOptions> effective_options(const store::Params& model_params,
                                           const nlohmann::ordered_json& request);

}  // namespace paddock::server
