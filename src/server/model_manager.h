// The minimal model manager (the scheduler issue replaces it): one model loaded at a time
// through the injected RunnerFactory, kept for its keep_alive after the last request, then
// unloaded by a reaper thread. Requests to the loaded model are serialised by a per-model
// lock; a request for another model waits until the current one is idle, then swaps.
// Invariants: a Lease keeps its model loaded and is the only user of its Runner; the
// keep_alive of the last finished request decides the expiry (0 = unload now, kForever).
//   PADDOCK_ASSIGN(auto lease, manager.acquire(key, load, keep_alive));
//   lease->runner().complete(...);   // released (and expiry set) when `lease` dies
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "runner/runner.h"
#include "server/duration.h"

namespace paddock::server {

using Clock = std::chrono::system_clock;

// What identifies a loaded model and what /api/ps reports about it.
struct ModelKey {
  std::string name;    // display name, "stories:latest"
  std::string digest;  // manifest digest (hex)
  std::string model_path;
  std::string family, format, parameter_size, quantization_level;
  std::vector<std::string> families;
};

struct LoadedModelInfo {
  ModelKey key;
  uint64_t size = 0, size_vram = 0;
  int64_t context_length = 0;
  Clock::time_point expires_at;
  bool forever = false;
};

class ModelManager {
 public:
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    runner::Runner& runner() { return *runner_; }
    int64_t load_duration_ns() const { return load_ns_; }
    // Changes the keep_alive applied when the lease ends.
    void set_keep_alive(Duration d) { keep_alive_ = d; }

   private:
    friend class ModelManager;
    struct Slot;
    Lease(ModelManager* m, std::shared_ptr<Slot> slot, Duration keep_alive, int64_t load_ns);
    ModelManager* manager_;
    std::shared_ptr<Slot> slot_;
    runner::Runner* runner_;
    Duration keep_alive_;
    int64_t load_ns_;
    std::unique_lock<std::mutex> use_;
  };

  ModelManager(runner::RunnerFactory factory, Duration default_keep_alive);
  ~ModelManager();
  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  Duration default_keep_alive() const { return default_keep_alive_; }
  // Loads (or reuses) the model and takes its use lock. `keep_alive` nullopt = default.
  // `cancelled` is polled while waiting for another request to finish.
  Result<std::unique_ptr<Lease>> acquire(const ModelKey& key, const runner::LoadOptions& load,
                                         std::optional<Duration> keep_alive,
                                         const std::function<bool()>& cancelled = {});
  // Unloads `name` if it is loaded and idle (waits for running requests). False if not loaded.
  bool unload(const std::string& name);
  std::vector<LoadedModelInfo> loaded() const;

 private:
  void release(const std::shared_ptr<Lease::Slot>& slot, Duration keep_alive);
  void reaper();

  runner::RunnerFactory factory_;
  Duration default_keep_alive_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Lease::Slot> current_;
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace paddock::server
