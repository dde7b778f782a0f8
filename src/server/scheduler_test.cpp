#include "server/scheduler.h"

#include <filesystem>

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "gguf/writer.h"
#include "tests/support/fixtures.h"

namespace paddock::server {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

struct World {
  std::mutex mu;
  Clock::time_point now = Clock::time_point() + hours(1000);
  std::map<std::string, int> loads;
  std::atomic<int> live{0}, max_live{0};
  std::atomic<uint64_t> live_bytes{0};
  uint64_t total_memory = UINT64_MAX / 2;
  uint64_t gpu_memory = 0;    // none
  uint64_t device_bytes = 7;  // what each runner reports placing on the GPU
  std::set<std::string> failing;
  std::function<bool(const runner::LoadOptions&)> out_of_memory;  // loads it says yes to fail so
  int64_t smaller_ctx = 0;                                        // what smaller_context answers
  std::optional<uint64_t> gpu_free;  // the GPU's free memory, none: no GPU to watch
  uint64_t gpu_free_step = 0;        // what comes back each time it is read
  int gpu_free_reads = 0;
  std::vector<std::optional<uint64_t>> gpu_free_at_load;
  std::atomic<bool> healthy{true};
  std::vector<std::string> events;  // "loaded a:latest", ... (on_event runs under the scheduler's lock)
};

class SchedFakeRunner : public runner::Runner {
 public:
  SchedFakeRunner(World* w, runner::LoadOptions load) : w_(w), load_(std::move(load)) {
    const int n = ++w_->live;
    int m = w_->max_live.load();
    while (n > m && !w_->max_live.compare_exchange_weak(m, n)) {
    }
    w_->live_bytes += 60;
  }
  ~SchedFakeRunner() override {
    --w_->live;
    w_->live_bytes -= 60;
  }
  runner::ModelFacts facts() const override {
    return {.context_length = load_.num_ctx, .memory_bytes = 60, .device_memory_bytes = w_->device_bytes};
  }
  Status complete(const runner::CompletionRequest&, const runner::ChunkFn& on_chunk) override {
    const int n = ++users;
    int m = max_users.load();
    while (n > m && !max_users.compare_exchange_weak(m, n)) {
    }
    std::this_thread::yield();
    --users;
    on_chunk({.done = true});
    return Status::ok();
  }
  Result<std::vector<runner::Embedding>> embed(const std::vector<std::string>&, bool) override {
    return unsupported("embed");
  }
  Result<std::vector<int32_t>> tokenize(std::string_view) override { return unsupported("tokenize"); }
  Result<std::string> detokenize(std::span<const int32_t>) override { return unsupported("detokenize"); }

  std::atomic<int> users{0}, max_users{0};

 private:
  World* w_;
  runner::LoadOptions load_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Scheduler> make(SchedulerConfig c = {}) {
    SchedulerEffects e;
    e.make_runner = [this](const runner::LoadOptions& l) -> Result<std::unique_ptr<runner::Runner>> {
      {
        std::lock_guard lk(w_.mu);
        ++w_.loads[l.model_path];
        if (w_.failing.count(l.model_path)) return invalid_argument("cannot load " + l.model_path);
        if (w_.out_of_memory && w_.out_of_memory(l)) {
          return Status(Code::kResourceExhausted, "vulkan: 60 MiB do not fit in the GPU's memory");
        }
        w_.gpu_free_at_load.push_back(w_.gpu_free);
      }
      return std::unique_ptr<runner::Runner>(new SchedFakeRunner(&w_, l));
    };
    e.free_memory = [this] { return w_.total_memory - w_.live_bytes; };
    e.estimate_memory = [](const runner::LoadOptions&, int) -> uint64_t { return 60; };
    e.gpu_memory = [this] { return w_.gpu_memory; };
    e.gpu_free_memory = [this] {
      std::lock_guard lk(w_.mu);
      ++w_.gpu_free_reads;
      const std::optional<uint64_t> now = w_.gpu_free;
      if (w_.gpu_free) *w_.gpu_free += w_.gpu_free_step;
      return now;
    };
    e.smaller_context = [this](const runner::LoadOptions& l, int) {
      std::lock_guard lk(w_.mu);
      return l.num_ctx == 0 ? w_.smaller_ctx : int64_t{0};
    };
    e.now = [this] {
      std::lock_guard lk(w_.mu);
      return w_.now;
    };
    e.healthy = [this](runner::Runner&) { return w_.healthy.load(); };
    e.expiry_thread = false;
    e.on_event = [this](SchedulerEvent event, const ModelIdentity& model) {
      const char* what = event == SchedulerEvent::kLoaded    ? "loaded "
                         : event == SchedulerEvent::kEvicted ? "evicted "
                                                             : "dead ";
      std::lock_guard lk(w_.mu);
      w_.events.push_back(what + model.name);
    };
    return std::make_unique<Scheduler>(c, std::move(e));
  }
  void advance(Duration d) {
    std::lock_guard lk(w_.mu);
    w_.now += std::chrono::duration_cast<Clock::duration>(d);
  }
  int loads(const std::string& p) {
    std::lock_guard lk(w_.mu);
    return w_.loads[p];
  }
  static Result<std::unique_ptr<Scheduler::Lease>> get(Scheduler& s, const std::string& path,
                                                       std::optional<Duration> ka = std::nullopt,
                                                       int64_t num_ctx = 0,
                                                       std::function<bool()> cancel = {}) {
    return s.acquire(ModelIdentity{.name = path + ":latest"},
                     runner::LoadOptions{.model_path = path, .num_ctx = num_ctx}, ka, cancel);
  }
  std::vector<std::string> loaded(Scheduler& s) {
    std::vector<std::string> out;
    for (const auto& m : s.list()) out.push_back(m.model_path);
    std::sort(out.begin(), out.end());
    return out;
  }

  World w_;
};

TEST_F(SchedulerTest, ReusesALoadedModelAndReportsIt) {
  auto s = make();
  {
    auto a = get(*s, "a", std::nullopt, 2048);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    EXPECT_TRUE((*a)->runner().complete({}, [](const runner::CompletionChunk&) { return true; }).is_ok());
  }
  const auto again = get(*s, "a", std::nullopt, 2048);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(loads("a"), 1);
  // Ollama reports the scheduler's time for a loaded model too (`run --verbose` prints it).
  EXPECT_GT((*again)->load_duration_ns(), 0);
  const auto ps = s->list();
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].model.name, "a:latest");
  EXPECT_EQ(ps[0].size, 60u);
  EXPECT_EQ(ps[0].size_vram, 7u);
  EXPECT_EQ(ps[0].context_length, 2048);
  EXPECT_FALSE(ps[0].forever);
  EXPECT_EQ(ps[0].expires_at, w_.now + kDefaultKeepAlive);
}

TEST_F(SchedulerTest, KeepAliveExpiresOnTheClock) {
  auto s = make();
  ASSERT_TRUE(get(*s, "a", seconds(10)).ok());  // the lease ends at once
  ASSERT_EQ(s->list().size(), 1u);
  EXPECT_EQ(s->list()[0].expires_at, w_.now + seconds(10));
  advance(seconds(9));
  s->expire_due();
  EXPECT_EQ(w_.live.load(), 1);
  advance(seconds(2));
  s->expire_due();
  EXPECT_EQ(w_.live.load(), 0);
  EXPECT_TRUE(s->list().empty());
}

TEST_F(SchedulerTest, KeepAliveZeroUnloadsWhenTheLastRequestEnds) {
  auto s = make({.num_parallel = 2});
  auto a = get(*s, "a", Duration::zero());
  auto b = get(*s, "a", Duration::zero());
  ASSERT_TRUE(a.ok() && b.ok());
  a->reset();
  EXPECT_EQ(w_.live.load(), 1);  // still in use by b
  b->reset();
  EXPECT_EQ(w_.live.load(), 0);
}

TEST_F(SchedulerTest, NegativeKeepAliveNeverExpiresAndOmittedKeepsTheCurrent) {
  auto s = make();
  ASSERT_TRUE(get(*s, "a", seconds(-1)).ok());
  ASSERT_TRUE(get(*s, "a").ok());  // omitted: stays forever
  advance(hours(10000));
  s->expire_due();
  ASSERT_EQ(s->list().size(), 1u);
  EXPECT_TRUE(s->list()[0].forever);

  auto lease = get(*s, "a");
  ASSERT_TRUE(lease.ok());
  (*lease)->set_keep_alive(minutes(1));
  lease->reset();
  advance(minutes(2));
  s->expire_due();
  EXPECT_EQ(w_.live.load(), 0);
}

TEST_F(SchedulerTest, ChangedNumCtxReloads) {
  auto s = make();
  ASSERT_TRUE(get(*s, "a", std::nullopt, 2048).ok());
  ASSERT_TRUE(get(*s, "a", std::nullopt, 2048).ok());
  EXPECT_EQ(loads("a"), 1);
  ASSERT_TRUE(get(*s, "a", std::nullopt, 4096).ok());
  EXPECT_EQ(loads("a"), 2);
  EXPECT_EQ(w_.live.load(), 1);
  EXPECT_EQ(s->list()[0].context_length, 4096);
}

TEST_F(SchedulerTest, UnhealthyRunnerIsReplaced) {
  auto s = make();
  ASSERT_TRUE(get(*s, "a").ok());
  w_.healthy = false;
  auto again = get(*s, "a");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(loads("a"), 2);
  EXPECT_EQ(w_.live.load(), 1);
}

TEST_F(SchedulerTest, ReportsLoadsEvictionsAndDeadRunners) {
  auto s = make({.max_loaded_models = 1});
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "a").ok());  // reused: no event
  ASSERT_TRUE(get(*s, "b").ok());  // a makes room
  w_.healthy = false;
  ASSERT_TRUE(get(*s, "b").ok());  // found dead: reloaded
  std::lock_guard lk(w_.mu);
  EXPECT_EQ(w_.events, (std::vector<std::string>{"loaded a:latest", "evicted a:latest", "loaded b:latest",
                                                 "dead b:latest", "loaded b:latest"}));
}

TEST_F(SchedulerTest, MaxLoadedEvictsShortestKeepAliveFirst) {
  auto s = make({.max_loaded_models = 2});
  ASSERT_TRUE(get(*s, "a", minutes(10)).ok());
  ASSERT_TRUE(get(*s, "b", minutes(1)).ok());
  ASSERT_TRUE(get(*s, "c", minutes(5)).ok());
  EXPECT_EQ(loaded(*s), (std::vector<std::string>{"a", "c"}));
  EXPECT_LE(w_.max_live.load(), 2);
}

TEST_F(SchedulerTest, EqualKeepAliveEvictsLeastRecentlyUsed) {
  auto s = make({.max_loaded_models = 2});
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "b").ok());
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "c").ok());
  EXPECT_EQ(loaded(*s), (std::vector<std::string>{"a", "c"}));
}

TEST_F(SchedulerTest, BusyModelIsNotEvictedWhileIdleOneIs) {
  auto s = make({.max_loaded_models = 2});
  auto a = get(*s, "a", minutes(1));  // held: shortest keep_alive but busy
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(get(*s, "b", minutes(10)).ok());
  ASSERT_TRUE(get(*s, "c").ok());
  EXPECT_EQ(loaded(*s), (std::vector<std::string>{"a", "c"}));
}

TEST_F(SchedulerTest, ModelThatDoesNotFitEvictsAnIdleOne) {
  w_.total_memory = 100;  // each model needs 60; 80% of the free memory must hold it
  auto s = make();
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "b").ok());
  EXPECT_EQ(loaded(*s), (std::vector<std::string>{"b"}));
  EXPECT_EQ(w_.max_live.load(), 1);
}

TEST_F(SchedulerTest, ModelThatDoesNotFitTheGpuEvictsAnIdleOneThere) {
  // Each model needs 60 and reports 7 on the GPU: with 70, b does not fit the 63 a leaves.
  w_.gpu_memory = 70;
  auto s = make();
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "b").ok());
  EXPECT_EQ(loaded(*s), (std::vector<std::string>{"b"}));
  // b asks for the CPU alone (num_gpu 0): a stays.
  ASSERT_TRUE(s->acquire(ModelIdentity{.name = "c:latest"},
                         runner::LoadOptions{.model_path = "c", .num_gpu = 0}, std::nullopt, {})
                  .ok());
  EXPECT_EQ(loaded(*s), (std::vector<std::string>{"b", "c"}));
}

TEST_F(SchedulerTest, GpuMemoryEvictsOnlyWhereItIsShortAndHeld) {
  w_.gpu_memory = 100;  // 60 fits in 80% of the 93 a leaves
  auto s = make();
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "b").ok());
  EXPECT_EQ(loaded(*s), (std::vector<std::string>{"a", "b"}));
  w_.gpu_memory = 70;
  w_.device_bytes = 0;  // models on the CPU: evicting frees no GPU memory
  auto t = make();
  ASSERT_TRUE(get(*t, "c").ok());
  ASSERT_TRUE(get(*t, "d").ok());
  EXPECT_EQ(loaded(*t), (std::vector<std::string>{"c", "d"}));
}

TEST_F(SchedulerTest, FirstModelLoadsEvenWhenMemoryLooksShort) {
  w_.total_memory = 10;
  auto s = make();
  EXPECT_TRUE(get(*s, "a").ok());
}

TEST_F(SchedulerTest, ParallelSlotsBoundConcurrentUsers) {
  auto s = make({.num_parallel = 2});
  auto a = get(*s, "a");
  auto b = get(*s, "a");
  ASSERT_TRUE(a.ok() && b.ok());
  int polls = 0;  // the third waits: it is cancelled on its second look
  auto c = get(*s, "a", std::nullopt, 0, [&] { return ++polls >= 2; });
  EXPECT_EQ(c.status().code(), Code::kCancelled);
  EXPECT_EQ(c.status().message(), "request canceled");
  a->reset();
  EXPECT_TRUE(get(*s, "a").ok());
  EXPECT_EQ(loads("a"), 1);
}

TEST_F(SchedulerTest, FullQueueAnswersBusy) {
  auto s = make({.max_queue = 1});
  auto held = get(*s, "a");
  ASSERT_TRUE(held.ok());
  std::atomic<bool> waiting{false};
  std::thread t([&] {
    auto r = get(*s, "a", std::nullopt, 0, [&] {
      waiting = true;
      return false;
    });
    EXPECT_TRUE(r.ok()) << r.status().to_string();
  });
  while (!waiting) std::this_thread::yield();
  EXPECT_EQ(s->queue_depth(), 1u);
  auto busy = get(*s, "a");
  EXPECT_EQ(busy.status().code(), Code::kUnavailable);
  EXPECT_EQ(busy.status().message(), kServerBusyMessage);
  auto other = get(*s, "b");  // the bound is global, also for models not loaded yet
  EXPECT_EQ(other.status().code(), Code::kUnavailable);
  held->reset();
  t.join();
  EXPECT_EQ(s->queue_depth(), 0u);
}

TEST_F(SchedulerTest, FailedLoadFailsOnlyThatRequest) {
  w_.failing.insert("bad");
  auto s = make();
  auto good = get(*s, "a");
  ASSERT_TRUE(good.ok());
  auto bad = get(*s, "bad");
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "cannot load bad");
  EXPECT_EQ(loaded(*s), std::vector<std::string>{"a"});
  w_.failing.clear();
  EXPECT_TRUE(get(*s, "bad").ok());
  EXPECT_EQ(loads("bad"), 2);
}

TEST_F(SchedulerTest, LoadThatRunsOutOfMemoryUnloadsTheOthersAndTriesAgain) {
  auto s = make();
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "b").ok());
  w_.out_of_memory = [this](const runner::LoadOptions&) { return w_.live > 0; };
  ASSERT_TRUE(get(*s, "c").ok());
  EXPECT_EQ(loads("c"), 2);
  EXPECT_EQ(loaded(*s), std::vector<std::string>{"c"});
  EXPECT_EQ(std::count_if(w_.events.begin(), w_.events.end(),
                          [](const std::string& e) { return e.starts_with("evicted "); }),
            2);
}

TEST_F(SchedulerTest, LoadThatRunsOutOfMemoryAloneTriesASmallerAutomaticContext) {
  w_.smaller_ctx = 32768;
  w_.out_of_memory = [](const runner::LoadOptions& l) { return l.num_ctx != 32768; };
  auto s = make();
  ASSERT_TRUE(get(*s, "a").ok());
  EXPECT_EQ(loads("a"), 2);
  ASSERT_EQ(s->list().size(), 1u);
  EXPECT_EQ(s->list()[0].context_length, 32768);
  // The model keeps the request's automatic context: the next such request uses it.
  ASSERT_TRUE(get(*s, "a").ok());
  EXPECT_EQ(loads("a"), 2);
  // A set context is the user's: no smaller one is tried.
  auto set = get(*s, "b", std::nullopt, 65536);
  EXPECT_EQ(set.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(loads("b"), 2);  // once beside a, once alone
}

TEST_F(SchedulerTest, OutOfMemoryRetriesEachOnceThenFail) {
  auto s = make();
  ASSERT_TRUE(get(*s, "a").ok());
  w_.smaller_ctx = 4096;
  w_.out_of_memory = [](const runner::LoadOptions& l) { return l.model_path == "c"; };
  auto c = get(*s, "c");
  EXPECT_EQ(c.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(c.status().message(), "vulkan: 60 MiB do not fit in the GPU's memory");
  EXPECT_EQ(loads("c"), 3);  // beside a, alone, alone at the smaller context
  EXPECT_TRUE(loaded(*s).empty());
  // Other failures are not retried.
  w_.failing.insert("d");
  EXPECT_EQ(get(*s, "d").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(loads("d"), 1);
}

TEST_F(SchedulerTest, NextLoadWaitsForTheGpuMemoryOfAnUnloadedModel) {
  w_.device_bytes = 1000;
  w_.gpu_free = 5000;
  w_.gpu_free_step = 250;  // the driver hands it back a little at a time
  auto s = make({.max_loaded_models = 1, .vram_recovery_poll = std::chrono::milliseconds(1)});
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "b").ok());
  ASSERT_EQ(w_.gpu_free_at_load.size(), 2u);
  // Read before a went (5000), then until 750 of its 1000 were back.
  EXPECT_GE(*w_.gpu_free_at_load[1], 5750u);
  EXPECT_GE(w_.gpu_free_reads, 4);
}

TEST_F(SchedulerTest, GpuMemoryThatDoesNotComeBackHoldsALoadOnlyUntilTheTimeout) {
  w_.device_bytes = 1000;
  w_.gpu_free = 5000;
  auto s = make({.max_loaded_models = 1,
                 .vram_recovery_poll = std::chrono::milliseconds(1),
                 .vram_recovery_timeout = std::chrono::milliseconds(100)});
  ASSERT_TRUE(get(*s, "a").ok());
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(get(*s, "b").ok());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  EXPECT_GT(w_.gpu_free_reads, 2);
}

TEST_F(SchedulerTest, ModelsWithoutGpuMemoryAreNotWaitedFor) {
  w_.device_bytes = 0;
  w_.gpu_free = 5000;
  auto s = make({.max_loaded_models = 1});
  ASSERT_TRUE(get(*s, "a").ok());
  ASSERT_TRUE(get(*s, "b").ok());
  EXPECT_EQ(w_.gpu_free_reads, 0);
}

TEST_F(SchedulerTest, UnloadByNameWaitsForActiveRequests) {
  auto s = make();
  EXPECT_FALSE(s->unload("a:latest"));
  ASSERT_TRUE(get(*s, "a").ok());
  EXPECT_TRUE(s->unload("a:latest"));
  EXPECT_EQ(w_.live.load(), 0);
  auto held = get(*s, "a");
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(s->unload("a:latest"));
  EXPECT_EQ(w_.live.load(), 1);
  held->reset();
  EXPECT_EQ(w_.live.load(), 0);
}

TEST_F(SchedulerTest, ShutdownUnloadsAndRefusesNewRequests) {
  auto s = make();
  ASSERT_TRUE(get(*s, "a", kForever).ok());
  s->shutdown();
  EXPECT_EQ(w_.live.load(), 0);
  EXPECT_EQ(get(*s, "a").status().code(), Code::kUnavailable);
}

TEST_F(SchedulerTest, ConcurrentRequestsAcrossModels) {
  auto s = make({.max_loaded_models = 2, .num_parallel = 2});
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const std::string path = std::string(1, char('a' + (t + i) % 3));
        auto lease = get(*s, path);
        if (!lease.ok()) {
          ++failures;
          continue;
        }
        auto& r = static_cast<SchedFakeRunner&>((*lease)->runner());
        if (!r.complete({}, [](const runner::CompletionChunk&) { return true; }).is_ok()) ++failures;
        EXPECT_LE(r.max_users.load(), 2);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(w_.max_live.load(), 2);
  EXPECT_LE(s->list().size(), 2u);
}

TEST_F(SchedulerTest, ConfigFromEnvironment) {
  ::setenv("PADDOCK_MAX_LOADED_MODELS", "5", 1);
  ::setenv("OLLAMA_NUM_PARALLEL", " \"4\" ", 1);
  ::setenv("OLLAMA_MAX_QUEUE", "lots", 1);
  const SchedulerConfig c = SchedulerConfig::from_env();
  ::unsetenv("PADDOCK_MAX_LOADED_MODELS");
  ::unsetenv("OLLAMA_NUM_PARALLEL");
  ::unsetenv("OLLAMA_MAX_QUEUE");
  EXPECT_EQ(c.max_loaded_models, 5);
  EXPECT_EQ(c.num_parallel, 4);
  EXPECT_EQ(c.max_queue, 512u);
}

// A GGUF with no tensors and only these u32 keys of `arch`: all the estimate reads.
std::string write_metadata_gguf(const std::string& name, const std::string& arch,
                                const std::vector<std::pair<std::string, uint32_t>>& keys) {
  gguf::Writer w;
  w.set_string("general.architecture", arch);
  for (const auto& [key, value] : keys) w.set_u32(arch + "." + key, value);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("paddock_sched_" + std::to_string(::getpid()) + "_" + name + ".gguf"))
                               .string();
  EXPECT_TRUE(w.write_file(path).is_ok());
  return path;
}

// qwen3's head dim is attention.key_length (128 here), not embedding_length / head_count (64).
const std::vector<std::pair<std::string, uint32_t>> kQwen3Keys = {{"block_count", 2},
                                                                  {"embedding_length", 256},
                                                                  {"attention.head_count", 4},
                                                                  {"attention.head_count_kv", 2},
                                                                  {"attention.key_length", 128},
                                                                  {"attention.value_length", 128},
                                                                  {"context_length", 1024}};

TEST(SchedulerMemory, KvCacheShapeIsTheModelLoaders) {
  const std::string path = write_metadata_gguf("qwen3", "qwen3", kQwen3Keys);
  auto f = gguf::File::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const KvCacheConfig c = kv_cache_config(**f, 512, DType::kF16);
  EXPECT_EQ(c.n_head_kv, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.head_dim_k, 128);
  EXPECT_EQ(c.head_dim_v, 128);
  EXPECT_EQ(c.n_ctx, 512);
  EXPECT_EQ(c.type, DType::kF16);
  // 2 layers x (K + V) x 512 cells x 2 kv heads x 128 x 2 bytes = 1 MiB (head dim 64 would
  // give half).
  EXPECT_EQ(kv_cache_bytes(c), 1048576u);
  EXPECT_EQ(kv_cache_config(**f, 4096, DType::kF16).n_ctx, 1024);  // the trained context caps it

  // Without head_count_kv as many kv heads as heads; without key_length n_embd / n_head.
  const std::string llama = write_metadata_gguf(
      "llama", "llama", {{"block_count", 5}, {"embedding_length", 64}, {"attention.head_count", 8}});
  auto g = gguf::File::open(llama);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const KvCacheConfig d = kv_cache_config(**g, 100, DType::kF16);
  EXPECT_EQ(d.n_head_kv, std::vector<int64_t>(5, 8));
  EXPECT_EQ(d.head_dim_k, 8);
  EXPECT_EQ(d.head_dim_v, 8);
  // 5 layers x (K + V) x 100 cells x 8 kv heads x 8 x 2 bytes.
  EXPECT_EQ(kv_cache_bytes(d), 128000u);

  // value_length apart from key_length (deepseek2's 192 / 128).
  const std::string mla = write_metadata_gguf("mla", "deepseek2",
                                              {{"block_count", 1},
                                               {"embedding_length", 64},
                                               {"attention.head_count", 2},
                                               {"attention.key_length", 192},
                                               {"attention.value_length", 128}});
  auto h = gguf::File::open(mla);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  // 1 layer x 10 cells x 2 kv heads x (192 + 128) x 2 bytes.
  EXPECT_EQ(kv_cache_bytes(kv_cache_config(**h, 10, DType::kF16)), 12800u);
  std::filesystem::remove(path);
  std::filesystem::remove(llama);
  std::filesystem::remove(mla);
}

// KV heads per layer (an array, as some models have): each layer's cells sized by its own.
TEST(SchedulerMemory, KvCachePerLayerHeadCounts) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 3);
  w.set_u32("llama.embedding_length", 64);
  w.set_u32("llama.attention.head_count", 8);
  const std::vector<int32_t> kv_heads = {8, 2, 4};
  w.set_array_i32("llama.attention.head_count_kv", kv_heads);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("paddock_sched_" + std::to_string(::getpid()) + "_per_layer.gguf"))
                               .string();
  ASSERT_TRUE(w.write_file(path).is_ok());
  auto f = gguf::File::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const KvCacheConfig c = kv_cache_config(**f, 100, DType::kF16);
  EXPECT_EQ(c.n_head_kv, (std::vector<int64_t>{8, 2, 4}));
  // (8 + 2 + 4) kv heads x (K + V) x 100 cells x head dim 8 x 2 bytes.
  EXPECT_EQ(kv_cache_bytes(c), 14u * 2 * 100 * 8 * 2);
}

TEST(SchedulerMemory, QuantizedKvCacheCountsBlocks) {
  const std::string path = write_metadata_gguf("qwen3_q", "qwen3", kQwen3Keys);
  auto f = gguf::File::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  // A row of 128 is 4 blocks of 32: Q8_0 4 x 34 = 136 bytes, Q4_0 4 x 18 = 72 bytes.
  // Q8_0: 2 layers x (K + V) x 512 cells x 2 kv heads x 136 = 557056.
  const KvCacheConfig q8 = kv_cache_config(**f, 512, DType::kQ8_0);
  EXPECT_EQ(q8.type, DType::kQ8_0);
  EXPECT_EQ(kv_cache_bytes(q8), 557056u);
  // Q4_0: 2 x 2 x 512 x 2 x 72 = 294912.
  EXPECT_EQ(kv_cache_bytes(kv_cache_config(**f, 512, DType::kQ4_0)), 294912u);

  // Head dim 8 is not a whole block: F16, as the engine falls back.
  const std::string small = write_metadata_gguf(
      "small", "llama", {{"block_count", 5}, {"embedding_length", 64}, {"attention.head_count", 8}});
  auto g = gguf::File::open(small);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(kv_cache_config(**g, 100, DType::kQ8_0).type, DType::kF16);

  // The estimate: the file, one cache per parallel slot, the compute allowance.
  const uint64_t file = std::filesystem::file_size(path);
  const auto q8_512 = [](const gguf::File& meta) {
    return kv_cache_bytes(kv_cache_config(meta, 512, DType::kQ8_0));
  };
  EXPECT_EQ(estimate_model_memory({.model_path = path}, 2, q8_512), file + 2 * 557056u + kComputeAllowance);
  std::filesystem::remove(path);
  std::filesystem::remove(small);
}

TEST(SchedulerMemory, EstimateAddsKvCacheAndComputeToTheFile) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::string path = testing::fixtures_dir() + "/models/stories260K.gguf";
  const uint64_t file = std::filesystem::file_size(path);
  // stories260K: 5 layers, 8 heads, 4 kv heads, n_embd 64 (head dim 8), trained context 2048
  // (the cap). Per slot: 5 layers x (K + V) x 2048 cells x 4 kv heads x 8 x 2 bytes = 1310720.
  const auto f16_4096 = [](const gguf::File& g) {
    return kv_cache_bytes(kv_cache_config(g, 4096, DType::kF16));
  };
  EXPECT_EQ(estimate_model_memory({.model_path = path}, 2, f16_4096),
            file + 2 * 1310720u + kComputeAllowance);
  // 5 x 2 x 100 x 4 x 8 x 2 = 64000; Q8_0 does not fit head dim 8, so the same as F16.
  const auto q8_100 = [](const gguf::File& g) {
    return kv_cache_bytes(kv_cache_config(g, 100, DType::kQ8_0));
  };
  EXPECT_EQ(estimate_model_memory({.model_path = path, .num_ctx = 100}, 1, q8_100),
            file + 64000u + kComputeAllowance);
  EXPECT_EQ(estimate_model_memory({.model_path = "/nonexistent"}, 1, f16_4096), kComputeAllowance);
}

}  // namespace
}  // namespace paddock::server
