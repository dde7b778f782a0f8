// `paddock serve`: the Ollama-compatible HTTP server on OLLAMA_HOST / PADDOCK_HOST over the
// model store at PADDOCK_MODELS / OLLAMA_MODELS, with the scheduler's settings from the
// environment. scheduler_effects() is the one place that says how models are run.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "base/env.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/version.h"
#include "engine/loaded_model.h"
#include "engine/offload.h"
#include "runner/in_process_runner.h"
#include "runner/runner.h"
#include "runner/subprocess_runner.h"
#include "server/api.h"
#include "server/http_server.h"
#include "store/store.h"

namespace paddock::cli {

namespace {

constexpr const char* kUsage =
    "Start paddock\n\nUsage:\n  paddock serve\n\nEnvironment Variables:\n"
    "      OLLAMA_HOST                IP Address for the paddock server (default 127.0.0.1:11434)\n"
    "      OLLAMA_KEEP_ALIVE          The duration that models stay loaded in memory (default \"5m\")\n"
    "      OLLAMA_MODELS              The path to the models directory\n"
    "      OLLAMA_ORIGINS             A comma separated list of allowed origins\n"
    "      OLLAMA_DEBUG               Show additional debug information (e.g. OLLAMA_DEBUG=1)\n"
    "      OLLAMA_MAX_LOADED_MODELS   Maximum number of loaded models (default 3)\n"
    "      OLLAMA_NUM_PARALLEL        Maximum number of parallel requests per model (default 1)\n"
    "      OLLAMA_MAX_QUEUE           Maximum number of queued requests (default 512)\n"
    "      OLLAMA_CONTEXT_LENGTH      Context length to use unless otherwise specified (default by VRAM)\n"
    "      OLLAMA_KV_CACHE_TYPE       Quantization type for the K/V cache (default f16)\n"
    "      OLLAMA_GPU_OVERHEAD        Reserve a portion of VRAM per GPU (bytes)\n"
    "      OLLAMA_VULKAN              Use a Vulkan GPU (default true; 0 keeps models on the CPU)\n"
    "      OLLAMA_LLM_LIBRARY         Set to cpu (or cpu_avx2, ...) to keep models on the CPU\n"
    "      GGML_VK_VISIBLE_DEVICES    Vulkan devices to choose from, by index (-1: none)\n"
    "  (each OLLAMA_<NAME> is also read as PADDOCK_<NAME>, which wins)\n";

// The engine options a runner child resolves for `load` with num_parallel slots, reading the
// KV cache type from the same environment (an unknown type is F16 there too).
Result<engine::EngineOptions> child_engine_options(const runner::LoadOptions& load, int num_parallel) {
  runner::LoadOptions sized = load;  // its KV caches weigh on the automatic context
  sized.num_parallel = num_parallel;
  PADDOCK_ASSIGN(engine::EngineOptions options, runner::engine_options(sized));
  const Result<DType> kv_type = engine::parse_kv_cache_type(env_get_or("KV_CACHE_TYPE", ""));
  options.kv_type = kv_type.ok() ? *kv_type : DType::kF16;
  return options;
}

// Each loaded model runs in a `paddock runner` child of this binary, so a crash in a model
// fails only its own requests; the scheduler pings idle runners before reuse, sizes models as
// the child will load them, watches the GPU's memory after unloads and retries a load that ran
// out of memory at a smaller automatic context.
server::SchedulerEffects scheduler_effects() {
  server::SchedulerEffects e =
      server::default_scheduler_effects(runner::make_subprocess_factory("/proc/self/exe"));
  e.estimate_memory = [](const runner::LoadOptions& load, int num_parallel) {
    const Result<engine::EngineOptions> options = child_engine_options(load, num_parallel);
    const DType kv_type = options.ok() ? options->kv_type : DType::kF16;
    return server::estimate_model_memory(load, num_parallel, [&](const gguf::File& f) {
      const Result<uint64_t> bytes =
          options.ok() ? engine::kv_cache_bytes_of(f, *options) : Result<uint64_t>(options.status());
      if (bytes.ok()) return *bytes;  // else an architecture the engine cannot size (and will refuse)
      return kv_cache_bytes(server::kv_cache_config(f, engine::resolve_num_ctx(load.num_ctx, 0), kv_type));
    });
  };
  e.gpu_memory = engine::placement_gpu_memory;
  e.gpu_free_memory = engine::placement_gpu_free_memory;
  e.smaller_context = [](const runner::LoadOptions& load, int num_parallel) -> int64_t {
    const Result<engine::EngineOptions> options = child_engine_options(load, num_parallel);
    auto file = gguf::File::open(load.model_path);
    return options.ok() && file.ok() ? engine::smaller_automatic_num_ctx(**file, *options) : 0;
  };
  e.healthy = runner::runner_alive;
  return e;
}

// Blobs no manifest references and stale partial and temp files, removed at start and then
// hourly, as Ollama prunes at start (OLLAMA_NOPRUNE turns both off). Prune leaves files younger
// than its grace period (a pull or create in flight) and refuses while a manifest is unreadable.
constexpr auto kPruneInterval = std::chrono::hours(1);

void prune_store(store::Store& store) {
  const Result<store::Store::PruneReport> r = store.prune();
  if (!r.ok()) {
    log_warn("prune skipped: " + r.status().message());
  } else if (r->blobs_removed + r->temp_files_removed > 0) {
    log_info("pruned " + std::to_string(r->blobs_removed) + " unused blobs and " +
             std::to_string(r->temp_files_removed) + " stale partial files");
  }
}

void start_pruning(store::Store& store) {
  if (env_flag("NOPRUNE")) return;
  prune_store(store);
  std::thread([root = store.root()] {
    for (;;) {
      std::this_thread::sleep_for(kPruneInterval);
      if (Result<store::Store> s = store::Store::open(root); s.ok()) prune_store(*s);
    }
  }).detach();
}

}  // namespace

int run_serve(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "Error: unknown argument \"%s\" for \"paddock serve\"\n", argv[i]);
    return 1;
  }
  auto store = store::Store::open(store::Store::default_root());
  if (!store.ok()) {
    std::fprintf(stderr, "Error: %s\n", store.status().message().c_str());
    return 1;
  }
  const server::HostPort where = server::parse_host(env_get_or("HOST", ""));
  server::ApiConfig config;
  config.scheduler = server::SchedulerConfig::from_env();
  config.origins = server::OriginPolicy::from_env();
  config.bound_host = where.host;
  config.version = kVersion;
  Result<server::ApiKeys> keys = server::ApiKeys::from_env();
  if (!keys.ok()) {
    std::fprintf(stderr, "Error: PADDOCK_API_KEYS: %s\n", keys.status().message().c_str());
    return 1;
  }
  config.keys = std::move(keys).value();
  if (!server::is_loopback_host(where.host) && !config.keys.enabled()) {
    log_warn("listening on " + where.to_string() +
             ": every client that can reach this address can run, pull, push, create and delete models "
             "(no PADDOCK_API_KEYS set); bind 127.0.0.1 or set API keys unless that is what you want");
  }
  start_pruning(*store);
  server::Api api(std::move(store).value(), scheduler_effects(), config);
  const Status s = server::serve(api, where);
  if (!s.is_ok()) {
    std::fprintf(stderr, "Error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace paddock::cli
