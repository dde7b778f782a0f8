// The model scheduler (Ollama's server/sched.go): which models are loaded, who may use
// them, and when they are unloaded. Several models stay loaded at once (max_loaded_models),
// each serves up to num_parallel requests at a time, requests waiting for a slot or a load
// are bounded (max_queue, then kServerBusyMessage), keep_alive decides when an idle model
// is unloaded, changed load-time options reload it, and idle models are evicted (shortest
// keep_alive first, then least recently used) when a new one does not fit in memory, or,
// when the loaded ones hold GPU memory and the new one may use the GPU, in the GPU's memory
// they leave (Ollama's check against free VRAM).
// A load that runs out of memory (kResourceExhausted) evicts every other model and tries
// again, then, alone, tries once more at a smaller automatic context, as Ollama does.
// Invariants: never two runners for one model file; one load at a time; a runner is
// destroyed (its process killed) outside the lock; a Lease must not outlive its Scheduler.
// All effects (starting runners, free memory, the clock) come in SchedulerEffects.
//   Scheduler s(SchedulerConfig::from_env(), default_scheduler_effects(factory));
//   PADDOCK_ASSIGN(auto lease, s.acquire(model, load, keep_alive, is_cancelled));
//   lease->runner().complete(...);   // released, and the keep_alive timer started, by ~Lease
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"
#include "kv/kv_cache.h"
#include "runner/runner.h"
#include "server/duration.h"

namespace paddock::server {

using Clock = std::chrono::system_clock;

// Ollama's ErrMaxQueue text (two spaces); the status code is kUnavailable (HTTP 503).
inline constexpr std::string_view kServerBusyMessage =
    "server busy, please try again.  maximum pending requests exceeded";

// What identifies a model to the scheduler (load.model_path is the key) and what /api/ps shows.
struct ModelIdentity {
  std::string name;    // display name, "stories:latest"
  std::string digest;  // manifest digest (hex)
  std::string family, format, parameter_size, quantization_level;
  std::vector<std::string> families;
};

struct RunningModel {
  ModelIdentity model;
  std::string model_path;
  uint64_t size = 0, size_vram = 0;
  int64_t context_length = 0;
  Clock::time_point expires_at;  // meaningless when forever
  bool forever = false;
  int active_requests = 0;
};

struct SchedulerConfig {
  int max_loaded_models = 3;  // Ollama: 3 x GPUs, 3 on CPU
  int num_parallel = 1;       // concurrent leases per model
  size_t max_queue = 512;     // requests waiting for a slot or a load
  Duration default_keep_alive = kDefaultKeepAlive;
  double memory_fit_fraction = 0.8;  // a model must fit in this part of free memory
  // After unloading models that held GPU memory, a load waits until 75% of it shows as free
  // again, checking this often, for at most this long (Ollama's waitForVRAMRecovery).
  std::chrono::milliseconds vram_recovery_poll{250}, vram_recovery_timeout{5000};
  // OLLAMA_/PADDOCK_ MAX_LOADED_MODELS, NUM_PARALLEL, MAX_QUEUE, KEEP_ALIVE; unparsable or
  // zero values keep the defaults.
  static SchedulerConfig from_env();
};

// What the scheduler reports to its observer (the metrics).
enum class SchedulerEvent : uint8_t {
  kLoaded,      // a runner started and loaded the model
  kEvicted,     // a model chosen to unload to make room for another
  kRunnerDead,  // the health check found an idle runner dead (crashed or hung)
};

struct SchedulerEffects {
  runner::RunnerFactory make_runner;
  std::function<uint64_t()> free_memory;  // bytes available to a new model now
  // Estimated bytes a model needs (weights + KV cache for num_ctx x num_parallel).
  std::function<uint64_t(const runner::LoadOptions&, int num_parallel)> estimate_memory;
  // The GPU's memory for models (its total less OLLAMA_GPU_OVERHEAD); 0 or empty: no GPU.
  std::function<uint64_t()> gpu_memory;
  // What is free of that GPU's memory now; empty or nullopt: nothing to wait for after unloads.
  std::function<std::optional<uint64_t>()> gpu_free_memory;
  // The context a load that ran out of memory at its automatic context (num_ctx unset) tries
  // once more with, the tier below (Ollama's retry); 0 or empty: none.
  std::function<int64_t(const runner::LoadOptions&, int num_parallel)> smaller_context;
  std::function<Clock::time_point()> now = [] { return Clock::now(); };
  std::function<bool(runner::Runner&)> healthy;  // empty = always; checked before reusing an idle runner
  bool expiry_thread = true;  // false in tests: they call expire_due() after moving the clock
  // Called with the scheduler's lock held: it must not call back into the scheduler. May be empty.
  std::function<void(SchedulerEvent, const ModelIdentity&)> on_event;
};

// The host device's free memory: MemAvailable from /proc/meminfo (0 when unreadable, which
// only lets one model load).
uint64_t available_system_memory();
// The size of the model file plus its adapters and projectors (the weights are mmapped).
uint64_t estimate_file_memory(const runner::LoadOptions& load, int num_parallel);
// The KV cache of one runner slot, read from the GGUF metadata as the model loader reads it,
// with the loader's key reader (gguf/keys.h), so that kv_cache_bytes() of it is what the
// engine allocates: per layer of block_count, n_head_kv = head_count_kv (else head_count; one
// value or one per layer), head_dim_k = key_length (else embedding_length / head_count), head_dim_v =
// value_length (else head_dim_k); n_ctx = num_ctx capped at the trained context_length. `type` falls back to
// F16 when the head dims are not whole blocks of it, as engine::LoadedModel does. Missing keys give zero
// sizes (kv_cache_bytes 0).
KvCacheConfig kv_cache_config(const gguf::File& file, int64_t num_ctx, DType type);
// What a CPU runner needs: the files, num_parallel KV caches of kv_bytes(file) each, and
// kComputeAllowance. `serve` plugs it in with the engine's own sizes (engine::
// kv_cache_bytes_of: sliding-window layers as their rings), falling back to
// kv_cache_config's for a file whose architecture the engine cannot size.
inline constexpr uint64_t kComputeAllowance = uint64_t{256} << 20;
uint64_t estimate_model_memory(const runner::LoadOptions& load, int num_parallel,
                               const std::function<uint64_t(const gguf::File&)>& kv_bytes);
// Real effects around a RunnerFactory: MemAvailable, estimate_file_memory, no health check.
SchedulerEffects default_scheduler_effects(runner::RunnerFactory factory);

class Scheduler {
  struct Slot;

 public:
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    runner::Runner& runner() { return *runner_; }
    // Time from acquire() to this lease: loading, or waiting for a slot of a loaded model.
    int64_t load_duration_ns() const { return load_ns_; }
    // The keep_alive to apply when this lease ends (as if the request had sent it).
    void set_keep_alive(Duration d) { keep_alive_ = d; }

   private:
    friend class Scheduler;
    Lease(Scheduler* s, std::shared_ptr<Slot> slot, int64_t load_ns);
    Scheduler* scheduler_;
    std::shared_ptr<Slot> slot_;
    runner::Runner* runner_;
    int64_t load_ns_;
    std::optional<Duration> keep_alive_;
  };

  Scheduler(SchedulerConfig config, SchedulerEffects effects);
  ~Scheduler();  // shutdown()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  const SchedulerConfig& config() const { return config_; }
  // Loads (or reuses) load.model_path and takes one of its parallel slots. keep_alive nullopt:
  // a new model gets the default, a loaded one keeps its current keep_alive. Errors: the
  // factory's (this request only), kUnavailable kServerBusyMessage when max_queue requests
  // already wait, kCancelled "request canceled" when `cancelled` turns true while waiting.
  Result<std::unique_ptr<Lease>> acquire(const ModelIdentity& model, const runner::LoadOptions& load,
                                         std::optional<Duration> keep_alive,
                                         const std::function<bool()>& cancelled = {});
  // Unloads every loaded model with this display name once its requests finish (Ollama's
  // keep_alive 0). False when none is loaded.
  bool unload(const std::string& name);
  // /api/ps: loaded models, the one expiring last first (forever first of all).
  std::vector<RunningModel> list() const;
  // Requests inside acquire(): waiting for a slot, a load or an eviction.
  size_t queue_depth() const;
  // Unloads idle models whose keep_alive ran out (the expiry thread calls this on time).
  void expire_due();
  // Refuses new requests, waits for held leases to end, unloads everything. Idempotent.
  void shutdown();

 private:
  using Doomed = std::vector<std::unique_ptr<runner::Runner>>;
  void release(const std::shared_ptr<Slot>& slot, std::optional<Duration> keep_alive);
  void remove_locked(const std::shared_ptr<Slot>& slot, Doomed& doomed);
  // Destroys `doomed` runners (kills their processes) with the lock released, then retakes it.
  void destroy_unlocked(std::unique_lock<std::mutex>& lk, Doomed& doomed);
  void expire_due_locked(Doomed& doomed);
  bool evict_one_locked(Doomed& doomed);
  std::shared_ptr<Slot> find_locked(const std::string& model_path) const;
  void report_locked(SchedulerEvent event, const ModelIdentity& model) const;
  void expiry_loop();
  // Whether a load may go ahead of the GPU memory unloads are returning: it came back, or
  // the wait timed out. Unlocks to read the memory.
  bool vram_recovered_locked(std::unique_lock<std::mutex>& lk);

  SchedulerConfig config_;
  SchedulerEffects effects_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Slot>> slots_;
  size_t waiting_ = 0;
  bool loading_ = false;
  int unloading_ = 0;  // runners being destroyed outside the lock: their memory is not free yet
  struct VramRecovery {
    uint64_t baseline = 0, bytes = 0;  // the GPU's free memory before the unloads, and what they held
    std::chrono::steady_clock::time_point deadline;
  };
  std::optional<VramRecovery> vram_recovery_;
  bool stopping_ = false;
  uint64_t use_seq_ = 0;
  std::thread expiry_;
};

}  // namespace paddock::server
