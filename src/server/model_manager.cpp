#include "server/model_manager.h"

#include "base/log.h"

namespace paddock::server {

struct ModelManager::Lease::Slot {
  ModelKey key;
  runner::LoadOptions load;
  std::unique_ptr<runner::Runner> runner;
  std::mutex use;  // serialises requests to this runner
  int active = 0;  // leases handed out and not yet released (guarded by the manager's mu_)
  Clock::time_point expires_at;
  bool forever = false;
};

ModelManager::Lease::Lease(ModelManager* m, std::shared_ptr<Slot> slot, Duration keep_alive, int64_t load_ns)
    : manager_(m),
      slot_(std::move(slot)),
      runner_(slot_->runner.get()),
      keep_alive_(keep_alive),
      load_ns_(load_ns),
      use_(slot_->use) {}

ModelManager::Lease::~Lease() {
  use_.unlock();
  manager_->release(slot_, keep_alive_);
}

ModelManager::ModelManager(runner::RunnerFactory factory, Duration default_keep_alive)
    : factory_(std::move(factory)), default_keep_alive_(default_keep_alive), reaper_([this] { reaper(); }) {}

ModelManager::~ModelManager() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  reaper_.join();
}

namespace {
bool same_load(const runner::LoadOptions& a, const runner::LoadOptions& b) {
  return a.model_path == b.model_path && a.adapter_paths == b.adapter_paths && a.num_ctx == b.num_ctx &&
         a.num_batch == b.num_batch && a.num_gpu == b.num_gpu && a.num_thread == b.num_thread;
}
}  // namespace

Result<std::unique_ptr<ModelManager::Lease>> ModelManager::acquire(const ModelKey& key,
                                                                   const runner::LoadOptions& load,
                                                                   std::optional<Duration> keep_alive,
                                                                   const std::function<bool()>& cancelled) {
  const Duration ka = keep_alive.value_or(default_keep_alive_);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (current_ && current_->key.name == key.name && current_->key.digest == key.digest &&
        same_load(current_->load, load)) {
      ++current_->active;
      std::shared_ptr<Lease::Slot> slot = current_;
      lock.unlock();
      return std::unique_ptr<Lease>(new Lease(this, slot, ka, 0));
    }
    if (!current_ || current_->active == 0) break;
    // Another model is busy: wait for it to go idle (re-checking for cancellation).
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (cancelled && cancelled()) return error(Code::kCancelled, "request canceled");
  }
  if (current_) {
    log_info("unloading model " + current_->key.name + " to load " + key.name);
    current_.reset();
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto made = factory_(load);
  if (!made.ok()) return made.status();
  const int64_t load_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  auto slot = std::make_shared<Lease::Slot>();
  slot->key = key;
  slot->load = load;
  slot->runner = std::move(made).value();
  slot->active = 1;
  current_ = slot;
  lock.unlock();
  return std::unique_ptr<Lease>(new Lease(this, slot, ka, load_ns));
}

void ModelManager::release(const std::shared_ptr<Lease::Slot>& slot, Duration keep_alive) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --slot->active;
    slot->forever = keep_alive == kForever;
    slot->expires_at = slot->forever ? Clock::time_point::max() : Clock::now() + keep_alive;
    if (keep_alive.count() <= 0 && !slot->forever && slot->active == 0 && current_ == slot) current_.reset();
  }
  cv_.notify_all();
}

bool ModelManager::unload(const std::string& name) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!current_ || current_->key.name != name) return false;
  cv_.wait(lock, [&] { return !current_ || current_->active == 0; });
  if (current_ && current_->key.name == name) current_.reset();
  cv_.notify_all();
  return true;
}

std::vector<LoadedModelInfo> ModelManager::loaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LoadedModelInfo> out;
  if (!current_) return out;
  LoadedModelInfo info;
  info.key = current_->key;
  const runner::ModelFacts facts = current_->runner->facts();
  info.size = facts.memory_bytes;
  info.size_vram = facts.device_memory_bytes;
  info.context_length = facts.context_length;
  // While a request runs, the expiry is not known yet: report the default from now.
  info.forever = current_->forever;
  info.expires_at =
      current_->active > 0 && !info.forever ? Clock::now() + default_keep_alive_ : current_->expires_at;
  out.push_back(info);
  return out;
}

void ModelManager::reaper() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (current_ && current_->active == 0 && !current_->forever) {
      if (Clock::now() >= current_->expires_at) {
        log_info("model " + current_->key.name + " expired, unloading");
        current_.reset();
        continue;
      }
      // A copy: the slot may be freed by another thread while this waits.
      const Clock::time_point deadline = current_->expires_at;
      cv_.wait_until(lock, deadline);
    } else {
      cv_.wait(lock);
    }
  }
}

}  // namespace paddock::server
