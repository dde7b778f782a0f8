// The Runner that runs the engine in this process (tests, the CLI, `paddock runner`): one
// loaded model and num_parallel slots, each a KV cache of the loaded context size. One
// batching thread runs every forward pass: complete() calls (from up to num_parallel
// threads at once; more wait for a slot) become engine::Sequences that join the shared batch
// between steps; their pieces come back to the calling thread through a queue. A request
// takes the free slot whose cache shares the longest prefix with its prompt, and only the
// rest is evaluated. KV type: OLLAMA_KV_CACHE_TYPE / PADDOCK_KV_CACHE_TYPE (f16, f32, q8_0,
// q4_0; an unknown value warns and uses f16).
// tokenize() is what the server counts prompts with (Ollama's runner: no BOS added, control
// tokens parsed); detokenize() concatenates token pieces, control tokens as text. embed()
// pools the final hidden states (engine/embedding.h), using a slot's cache.
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
// num_batch, num_thread; num_parallel (1..64) slots. Adapters and projectors are not
// supported yet (kUnsupported).
Result<std::unique_ptr<Runner>> load_in_process(const LoadOptions& load,
                                                const engine::EngineOptions& defaults = {});

// The engine's options for `load` over `defaults`, as load_in_process takes them (the KV
// cache type aside, which it reads from OLLAMA_KV_CACHE_TYPE); kInvalidArgument for values
// out of range.
Result<engine::EngineOptions> engine_options(const LoadOptions& load,
                                             const engine::EngineOptions& defaults = {});

// A factory for the server that loads with load_in_process(load, defaults).
RunnerFactory make_in_process_factory(const engine::EngineOptions& defaults = {});

// Ollama's api.Options -> the engine's completion settings (unset fields keep the engine's
// defaults). Exposed for tests and for callers that drive the engine directly.
Result<engine::CompletionParams> to_completion_params(const CompletionRequest& request);

}  // namespace paddock::runner
