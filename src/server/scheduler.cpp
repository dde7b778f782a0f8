#include "server/scheduler.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "backend/buffer.h"
#include "base/checked_math.h"
#include "base/env.h"
#include "base/log.h"
#include "gguf/keys.h"

namespace paddock::server {

using std::chrono::milliseconds;

struct Scheduler::Slot {
  ModelIdentity model;
  runner::LoadOptions load;
  std::unique_ptr<runner::Runner> runner;  // null while loading
  bool loading = true;
  bool unloading = false;  // no new users; removed when the last one leaves
  int active = 0;
  Duration keep_alive{};
  bool expiry_armed = false;
  Clock::time_point expires_at;
  uint64_t last_used = 0;
  uint64_t size = 0, size_vram = 0;
  int64_t context_length = 0;
};

namespace {

std::optional<uint64_t> env_uint(const std::string& name) {
  const auto v = env_get(name);
  if (!v) return std::nullopt;
  std::string s = *v;
  const auto strip = [](char c) { return c == ' ' || c == '\t' || c == '"' || c == '\''; };
  while (!s.empty() && strip(s.front())) s.erase(s.begin());
  while (!s.empty() && strip(s.back())) s.pop_back();
  uint64_t out = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return out;
}

// Ollama's needsReload, for the options a runner is loaded with.
bool needs_reload(const runner::LoadOptions& loaded, const runner::LoadOptions& req) {
  if (loaded.adapter_paths != req.adapter_paths || loaded.projector_paths != req.projector_paths) return true;
  if (loaded.num_ctx != req.num_ctx || loaded.num_batch != req.num_batch) return true;
  if (loaded.num_thread != req.num_thread || loaded.use_mmap != req.use_mmap) return true;
  return req.num_gpu && *req.num_gpu != -1 && loaded.num_gpu != req.num_gpu;
}

// Negative keep_alive means forever, however it was spelled.
Duration normalise(Duration d) { return d < Duration::zero() ? kForever : d; }

uint64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : uint64_t(n);
}

}  // namespace

SchedulerConfig SchedulerConfig::from_env() {
  SchedulerConfig c;
  if (auto v = env_uint("MAX_LOADED_MODELS"); v && *v > 0)
    c.max_loaded_models = int(std::min<uint64_t>(*v, 1024));
  if (auto v = env_uint("NUM_PARALLEL"); v && *v > 0) c.num_parallel = int(std::min<uint64_t>(*v, 1024));
  if (auto v = env_uint("MAX_QUEUE"); v && *v > 0) c.max_queue = size_t(*v);
  c.default_keep_alive = keep_alive_from_env();
  return c;
}

uint64_t available_system_memory() { return host_device().memory().free; }

uint64_t estimate_file_memory(const runner::LoadOptions& load, int) {
  uint64_t total = file_size_or_zero(load.model_path);
  for (const auto& p : load.adapter_paths) total += file_size_or_zero(p);
  for (const auto& p : load.projector_paths) total += file_size_or_zero(p);
  return total;
}

KvCacheConfig kv_cache_config(const gguf::File& file, int64_t num_ctx, DType type) {
  KvCacheConfig c;
  const auto arch = file.get_string("general.architecture");
  if (!arch) return c;
  const gguf::KeyReader r(file, *arch);
  const auto get = [&](const char* key) {
    const Result<int64_t> v = r.optional_int(key, 0);
    return v.ok() ? *v : int64_t{0};
  };
  c.n_ctx = std::max<int64_t>(num_ctx, 1);
  if (const int64_t trained = get("context_length"); trained > 0) c.n_ctx = std::min(c.n_ctx, trained);
  const Result<std::vector<int64_t>> heads = r.per_layer_int("attention.head_count", get("block_count"));
  if (!heads.ok()) return c;
  Result<std::vector<int64_t>> kv_heads =
      r.per_layer_int("attention.head_count_kv", get("block_count"), *heads);
  if (!kv_heads.ok()) return c;
  c.n_head_kv = std::move(*kv_heads);
  c.head_dim_k = get("attention.key_length");  // qwen3, gemma: not n_embd / n_head
  if (c.head_dim_k == 0) c.head_dim_k = get("embedding_length") / (*heads)[0];
  c.head_dim_v = get("attention.value_length");
  if (c.head_dim_v == 0) c.head_dim_v = c.head_dim_k;
  c.type = kv_type_fits(type, c.head_dim_k, c.head_dim_v) ? type : DType::kF16;
  return c;
}

uint64_t estimate_model_memory(const runner::LoadOptions& load, int num_parallel,
                               const std::function<uint64_t(const gguf::File&)>& kv_bytes) {
  const uint64_t files = estimate_file_memory(load, num_parallel) + kComputeAllowance;
  auto f = gguf::File::open(load.model_path);
  if (!f.ok()) return files;
  // The runner allocates one cache per parallel slot.
  const uint64_t per_slot = kv_bytes(**f);
  uint64_t total = 0;
  if (!checked_mul(per_slot, static_cast<uint64_t>(std::max(1, num_parallel)), &total) ||
      !checked_add(total, files, &total)) {
    return UINT64_MAX;  // a hostile file's sizes: it cannot fit (and would not load)
  }
  return total;
}

SchedulerEffects default_scheduler_effects(runner::RunnerFactory factory) {
  SchedulerEffects e;
  e.make_runner = std::move(factory);
  e.free_memory = available_system_memory;
  e.estimate_memory = estimate_file_memory;
  return e;
}

Scheduler::Lease::Lease(Scheduler* s, std::shared_ptr<Slot> slot, int64_t load_ns)
    : scheduler_(s), slot_(std::move(slot)), runner_(slot_->runner.get()), load_ns_(load_ns) {}

Scheduler::Lease::~Lease() { scheduler_->release(slot_, keep_alive_); }

Scheduler::Scheduler(SchedulerConfig config, SchedulerEffects effects)
    : config_(std::move(config)), effects_(std::move(effects)) {
  config_.max_loaded_models = std::max(1, config_.max_loaded_models);
  config_.num_parallel = std::max(1, config_.num_parallel);
  if (effects_.expiry_thread) expiry_ = std::thread([this] { expiry_loop(); });
}

Scheduler::~Scheduler() { shutdown(); }

std::shared_ptr<Scheduler::Slot> Scheduler::find_locked(const std::string& model_path) const {
  for (const auto& s : slots_) {
    if (s->load.model_path == model_path) return s;
  }
  return nullptr;
}

void Scheduler::report_locked(SchedulerEvent event, const ModelIdentity& model) const {
  if (effects_.on_event) effects_.on_event(event, model);
}

void Scheduler::remove_locked(const std::shared_ptr<Slot>& slot, Doomed& doomed) {
  std::erase(slots_, slot);
  if (slot->runner) {
    doomed.push_back(std::move(slot->runner));
    ++unloading_;
  }
  cv_.notify_all();
}

void Scheduler::expire_due_locked(Doomed& doomed) {
  const auto now = effects_.now();
  std::vector<std::shared_ptr<Slot>> due;
  for (const auto& s : slots_) {
    if (s->active == 0 && !s->loading && s->expiry_armed && now >= s->expires_at) due.push_back(s);
  }
  for (const auto& s : due) remove_locked(s, doomed);
}

// Ollama's findRunnerToUnload: shortest keep_alive first (forever last), then least
// recently used; an idle one goes now, else the first is drained. False: nothing to evict.
bool Scheduler::evict_one_locked(Doomed& doomed) {
  std::vector<std::shared_ptr<Slot>> order;
  for (const auto& s : slots_) {
    if (s->unloading) return true;  // one is already on its way out: wait for it
    if (!s->loading) order.push_back(s);
  }
  if (order.empty()) return false;
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a->keep_alive, a->last_used, a->load.model_path) <
           std::tie(b->keep_alive, b->last_used, b->load.model_path);
  });
  for (const auto& s : order) {
    if (s->active == 0) {
      report_locked(SchedulerEvent::kEvicted, s->model);
      remove_locked(s, doomed);
      return true;
    }
  }
  report_locked(SchedulerEvent::kEvicted, order.front()->model);
  order.front()->unloading = true;
  return true;
}

Result<std::unique_ptr<Scheduler::Lease>> Scheduler::acquire(const ModelIdentity& model,
                                                             const runner::LoadOptions& load,
                                                             std::optional<Duration> keep_alive,
                                                             const std::function<bool()>& cancelled) {
  // Ollama's load_duration: from the request reaching the scheduler to a runner ready for it,
  // so also the wait for a slot of a model already loaded.
  const auto t0 = std::chrono::steady_clock::now();
  const auto since_t0 = [&] {
    using std::chrono::steady_clock;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(steady_clock::now() - t0).count();
  };
  Doomed doomed;  // declared before the lock: destroyed after it is released
  std::unique_lock lk(mu_);
  const auto flush = [&] { destroy_unlocked(lk, doomed); };
  if (stopping_) return Status(Code::kUnavailable, "server is shutting down");
  if (waiting_ >= config_.max_queue) return Status(Code::kUnavailable, std::string(kServerBusyMessage));
  ++waiting_;
  struct Unwait {
    size_t& n;
    ~Unwait() { --n; }
  } unwait{waiting_};
  const auto take = [&](const std::shared_ptr<Slot>& s, int64_t load_ns) {
    ++s->active;
    s->expiry_armed = false;
    s->last_used = ++use_seq_;
    if (keep_alive) s->keep_alive = normalise(*keep_alive);
    return std::unique_ptr<Lease>(new Lease(this, s, load_ns));
  };

  bool oom_evicting = false, oom_evicted = false;  // the retries after a load ran out of memory
  int64_t oom_num_ctx = 0;
  for (;;) {
    expire_due_locked(doomed);
    flush();
    if (stopping_) return Status(Code::kUnavailable, "server is shutting down");
    if (cancelled && cancelled()) return Status(Code::kCancelled, "request canceled");

    if (auto slot = find_locked(load.model_path)) {
      if (!slot->loading && !slot->unloading && needs_reload(slot->load, load)) slot->unloading = true;
      if (!slot->loading && !slot->unloading && slot->active == 0 && effects_.healthy) {
        ++slot->active;  // holds it while the health check runs unlocked
        lk.unlock();
        const bool ok = effects_.healthy(*slot->runner);
        lk.lock();
        --slot->active;
        if (!ok) {
          report_locked(SchedulerEvent::kRunnerDead, slot->model);
          slot->unloading = true;
        }
      }
      if (slot->unloading && slot->active == 0) {
        remove_locked(slot, doomed);
        continue;
      }
      if (!slot->loading && !slot->unloading && slot->active < config_.num_parallel) {
        auto lease = take(slot, since_t0());
        slot->model = model;  // the latest name used for this file is what ps shows
        return lease;
      }
      cv_.wait_for(lk, milliseconds(50));
      continue;
    }

    if (loading_ || unloading_ > 0) {  // one load at a time, after earlier unloads freed memory
      cv_.wait_for(lk, milliseconds(50));
      continue;
    }
    if (int(slots_.size()) >= config_.max_loaded_models || (oom_evicting && !slots_.empty())) {
      if (!evict_one_locked(doomed) || doomed.empty()) cv_.wait_for(lk, milliseconds(50));
      continue;
    }
    if (!slots_.empty()) {
      const uint64_t need =
          effects_.estimate_memory ? effects_.estimate_memory(load, config_.num_parallel) : 0;
      const uint64_t free = effects_.free_memory ? effects_.free_memory() : UINT64_MAX;
      // The GPU's memory the loaded models leave (their reported size_vram), where the new
      // one may take the GPU (num_gpu unset: as many layers as fit) and evicting frees some.
      const uint64_t gpu =
          effects_.gpu_memory && (!load.num_gpu || *load.num_gpu < 0) ? effects_.gpu_memory() : 0;
      uint64_t on_gpu = 0;
      for (const auto& loaded : slots_) on_gpu += loaded->size_vram;
      const uint64_t free_gpu = gpu > on_gpu ? gpu - on_gpu : 0;
      if (double(need) > double(free) * config_.memory_fit_fraction ||
          (gpu > 0 && on_gpu > 0 && double(need) > double(free_gpu) * config_.memory_fit_fraction)) {
        if (!evict_one_locked(doomed) || doomed.empty()) cv_.wait_for(lk, milliseconds(50));
        continue;
      }
    }

    if (vram_recovery_) {
      if (!vram_recovered_locked(lk)) cv_.wait_for(lk, config_.vram_recovery_poll);
      continue;  // the lock was let go: look again
    }

    auto slot = std::make_shared<Slot>();
    slot->model = model;
    slot->load = load;
    slot->keep_alive = normalise(keep_alive.value_or(config_.default_keep_alive));
    slots_.push_back(slot);
    loading_ = true;
    lk.unlock();
    runner::LoadOptions with_slots = load;
    with_slots.num_parallel = config_.num_parallel;  // the runner batches that many sequences
    if (oom_num_ctx > 0) with_slots.num_ctx = oom_num_ctx;  // the slot keeps the request's (automatic)
    auto made = effects_.make_runner(with_slots);
    const bool oom = !made.ok() && made.status().code() == Code::kResourceExhausted;
    const int64_t smaller = oom && oom_num_ctx == 0 && effects_.smaller_context
                                ? effects_.smaller_context(load, config_.num_parallel)
                                : 0;
    lk.lock();
    loading_ = false;
    cv_.notify_all();
    if (!made.ok() || *made == nullptr) {
      std::erase(slots_, slot);
      if (made.ok()) return internal_error("runner factory returned no runner for " + load.model_path);
      if (oom && !oom_evicted && !slots_.empty()) {
        log_info("loading " + model.name + " ran out of memory (" + made.status().message() +
                 "); unloading the other models and trying again");
        oom_evicting = oom_evicted = true;
        continue;
      }
      if (smaller > 0) {
        log_info("loading " + model.name + " ran out of memory (" + made.status().message() +
                 "); trying again with a context of " + std::to_string(smaller));
        oom_num_ctx = smaller;
        continue;
      }
      return made.status();
    }
    slot->runner = std::move(made).value();
    const runner::ModelFacts facts = slot->runner->facts();
    slot->size = facts.memory_bytes != 0    ? facts.memory_bytes
                 : effects_.estimate_memory ? effects_.estimate_memory(load, config_.num_parallel)
                                            : 0;
    slot->size_vram = facts.device_memory_bytes;
    slot->context_length = facts.context_length;
    slot->loading = false;
    report_locked(SchedulerEvent::kLoaded, slot->model);
    if (stopping_) {
      remove_locked(slot, doomed);
      flush();
      return Status(Code::kUnavailable, "server is shutting down");
    }
    return take(slot, since_t0());
  }
}

void Scheduler::release(const std::shared_ptr<Slot>& slot, std::optional<Duration> keep_alive) {
  Doomed doomed;
  std::unique_lock lk(mu_);
  if (keep_alive) slot->keep_alive = normalise(*keep_alive);
  --slot->active;
  slot->last_used = ++use_seq_;
  if (slot->active == 0) {
    if (slot->unloading || slot->keep_alive == Duration::zero()) {
      remove_locked(slot, doomed);
    } else if (slot->keep_alive != kForever) {
      slot->expiry_armed = true;
      slot->expires_at = effects_.now() + std::chrono::duration_cast<Clock::duration>(slot->keep_alive);
    }
  }
  cv_.notify_all();
  // Destroyed without the lock, but counted as unloading so no load races its memory.
  destroy_unlocked(lk, doomed);
}

bool Scheduler::unload(const std::string& name) {
  Doomed doomed;
  std::unique_lock lk(mu_);
  bool found = false;
  std::vector<std::shared_ptr<Slot>> idle;
  for (const auto& s : slots_) {
    if (s->model.name != name || s->loading) continue;
    found = true;
    s->keep_alive = Duration::zero();
    if (s->active == 0) {
      idle.push_back(s);
    } else {
      s->unloading = true;
    }
  }
  for (const auto& s : idle) remove_locked(s, doomed);
  destroy_unlocked(lk, doomed);
  return found;
}

void Scheduler::destroy_unlocked(std::unique_lock<std::mutex>& lk, Doomed& doomed) {
  if (doomed.empty()) return;
  const int n = int(doomed.size());
  uint64_t vram = 0;
  for (const auto& r : doomed) vram += r->facts().device_memory_bytes;
  lk.unlock();
  // Drivers can take a moment to hand a process's GPU memory back: the next load waits for it.
  const std::optional<uint64_t> before =
      vram > 0 && effects_.gpu_free_memory ? effects_.gpu_free_memory() : std::nullopt;
  doomed.clear();
  lk.lock();
  if (before) {
    VramRecovery& r =
        vram_recovery_ ? *vram_recovery_ : vram_recovery_.emplace(VramRecovery{.baseline = *before});
    r.baseline = std::min(r.baseline, *before);
    r.bytes += vram;
    r.deadline = std::chrono::steady_clock::now() + config_.vram_recovery_timeout;
  }
  unloading_ -= n;
  cv_.notify_all();
}

bool Scheduler::vram_recovered_locked(std::unique_lock<std::mutex>& lk) {
  const VramRecovery r = *vram_recovery_;
  lk.unlock();
  const std::optional<uint64_t> free = effects_.gpu_free_memory();
  lk.lock();
  const uint64_t back = free && *free > r.baseline ? *free - r.baseline : 0;
  const bool recovered = !free || double(back) >= 0.75 * double(r.bytes);
  const bool late = std::chrono::steady_clock::now() >= r.deadline;
  if (late && !recovered) {
    log_warn("GPU memory did not come back within " + std::to_string(config_.vram_recovery_timeout.count()) +
             " ms of unloading a model (" + std::to_string(back >> 20) + " of " +
             std::to_string(r.bytes >> 20) + " MiB); loading anyway");
  }
  if (recovered || late) vram_recovery_.reset();
  return recovered || late;
}

std::vector<RunningModel> Scheduler::list() const {
  std::lock_guard lk(mu_);
  const auto now = effects_.now();
  std::vector<RunningModel> out;
  for (const auto& s : slots_) {
    if (s->loading) continue;
    RunningModel m{.model = s->model,
                   .model_path = s->load.model_path,
                   .size = s->size,
                   .size_vram = s->size_vram,
                   .context_length = s->context_length,
                   .forever = s->keep_alive == kForever,
                   .active_requests = s->active};
    if (!m.forever) {
      m.expires_at =
          s->expiry_armed ? s->expires_at : now + std::chrono::duration_cast<Clock::duration>(s->keep_alive);
    }
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(), [](const RunningModel& a, const RunningModel& b) {
    if (a.forever != b.forever) return a.forever;
    return a.expires_at > b.expires_at;
  });
  return out;
}

size_t Scheduler::queue_depth() const {
  std::lock_guard lk(mu_);
  return waiting_;
}

void Scheduler::expire_due() {
  Doomed doomed;
  std::unique_lock lk(mu_);
  expire_due_locked(doomed);
  destroy_unlocked(lk, doomed);
}

void Scheduler::expiry_loop() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    auto wait = milliseconds(1000);
    const auto now = effects_.now();
    for (const auto& s : slots_) {
      if (!s->expiry_armed || s->active != 0) continue;
      const auto left = std::chrono::duration_cast<milliseconds>(s->expires_at - now) + milliseconds(1);
      wait = std::clamp(left, milliseconds(0), wait);
    }
    cv_.wait_for(lk, wait);
    if (stopping_) break;
    lk.unlock();
    expire_due();
    lk.lock();
  }
}

void Scheduler::shutdown() {
  Doomed doomed;
  std::unique_lock lk(mu_);
  stopping_ = true;
  cv_.notify_all();
  cv_.wait(lk, [&] {
    return !loading_ &&
           std::all_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->active == 0; });
  });
  for (auto& s : slots_) {
    if (s->runner) doomed.push_back(std::move(s->runner));
  }
  slots_.clear();
  lk.unlock();
  doomed.clear();
  if (expiry_.joinable()) expiry_.join();
}

}  // namespace paddock::server
