// The Runner that runs the engine in this process: used by tests, the CLI and by `serve`
// until runner subprocesses arrive. One loaded model and one KV cache of the loaded context
// size; a completion at a time (the Runner contract), the cache cleared per request.
// tokenize() is what the server counts prompts with (Ollama's runner: no BOS added, control
// tokens parsed); detokenize() concatenates token pieces, control tokens as text.
// embed() is kUnsupported until models expose their final hidden state.
//   runner::RunnerFactory f = make_in_process_factory({.backend = engine::BackendKind::kRef});
//   PADDOCK_ASSIGN(std::unique_ptr<runner::Runner> r, f({.model_path = "m.gguf"}));
#pragma once

#include <memory>

#include "base/status.h"
#include "engine/completion.h"
#include "engine/loaded_model.h"
#include "runner/runner.h"

namespace paddock::runner {

// Loads load.model_path. LoadOptions win over `defaults` where set: num_ctx (> 0),
// num_batch, num_thread. Adapters and projectors are not supported yet (kUnsupported).
Result<std::unique_ptr<Runner>> load_in_process(const LoadOptions& load,
                                                const engine::EngineOptions& defaults = {});

// A factory for the server that loads with load_in_process(load, defaults).
RunnerFactory make_in_process_factory(const engine::EngineOptions& defaults = {});

// Ollama's api.Options -> the engine's completion settings (unset fields keep the engine's
// defaults). Exposed for tests and for callers that drive the engine directly.
Result<engine::CompletionParams> to_completion_params(const CompletionRequest& request);

}  // namespace paddock::runner
