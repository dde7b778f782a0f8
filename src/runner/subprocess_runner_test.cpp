// Runs real child processes: this test binary re-executes itself (/proc/self/exe) and, with
// PADDOCK_FAKE_RUNNER_CHILD set, acts as `paddock runner` serving a FakeRunner whose
// behaviour the model path names ("ok", "crash", "endless", "hang", "fail-load").
#include "runner/subprocess_runner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "runner/runner_child.h"

namespace paddock::runner {
namespace {

class FakeRunner : public Runner {
 public:
  explicit FakeRunner(LoadOptions load) : load_(std::move(load)) {}
  ModelFacts facts() const override { return {.context_length = load_.num_ctx, .memory_bytes = 1000}; }
  Status complete(const CompletionRequest& req, const ChunkFn& on_chunk) override {
    const std::string& mode = load_.model_path;
    if (mode == "hang") ::pause();
    for (int i = 0;; ++i) {
      if (req.is_cancelled && req.is_cancelled()) return Status(Code::kCancelled, "request canceled");
      if (mode == "crash" && i == 2) ::kill(::getpid(), SIGKILL);
      if (mode == "ok" && i == 5) break;
      if (mode == "endless") std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!on_chunk({.text = req.prompt + std::to_string(i)}))
        return Status(Code::kCancelled, "request canceled");
    }
    return on_chunk({.done = true, .done_reason = "stop", .eval_count = 5})
               ? Status::ok()
               : Status(Code::kCancelled, "canceled");
  }
  Result<std::vector<Embedding>> embed(const std::vector<std::string>& texts, bool) override {
    std::vector<Embedding> out;
    for (const auto& t : texts) out.push_back({{float(t.size())}, int64_t(t.size())});
    return out;
  }
  Result<std::vector<int32_t>> tokenize(std::string_view text) override {
    return std::vector<int32_t>(text.begin(), text.end());
  }
  Result<std::string> detokenize(std::span<const int32_t> tokens) override {
    return std::string(tokens.begin(), tokens.end());
  }

 private:
  LoadOptions load_;
};

Result<std::unique_ptr<Runner>> fake_factory(const LoadOptions& load) {
  if (load.model_path == "fail-load") return invalid_argument("fake load failure");
  return std::unique_ptr<Runner>(new FakeRunner(load));
}

std::vector<std::string> own_command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  for (size_t p = 0; p < all.size();) {
    const size_t e = all.find('\0', p);
    out.push_back(all.substr(p, e - p));
    p = e == std::string::npos ? all.size() : e + 1;
  }
  return out;
}

// Before gtest's main: the child modes of this binary.
const int kChildMode = [] {
  if (std::getenv("PADDOCK_FAKE_RUNNER_CHILD") != nullptr) {
    std::vector<std::string> args = own_command_line();
    std::vector<char*> argv;
    for (size_t i = 1; i < args.size(); ++i) argv.push_back(args[i].data());  // from "runner"
    ::_exit(run_runner_child(int(argv.size()), argv.data(), fake_factory));
  }
  if (const char* fd = std::getenv("PADDOCK_FAKE_RUNNER_MIDDLE")) {
    // A stand-in server: start a runner, report its pid, wait to be killed.
    ::unsetenv("PADDOCK_FAKE_RUNNER_MIDDLE");
    ::setenv("PADDOCK_FAKE_RUNNER_CHILD", "1", 1);
    auto r = SubprocessRunner::spawn({.model_path = "ok"}, {});
    const pid_t pid = r.ok() ? (*r)->pid() : -1;
    if (::write(std::atoi(fd), &pid, sizeof pid) != sizeof pid) ::_exit(1);
    for (;;) ::pause();
  }
  return 0;
}();

class SubprocessRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("PADDOCK_FAKE_RUNNER_CHILD", "1", 1); }
  void TearDown() override { ::unsetenv("PADDOCK_FAKE_RUNNER_CHILD"); }

  static std::unique_ptr<SubprocessRunner> load(const LoadOptions& l, SubprocessOptions o = {}) {
    auto r = SubprocessRunner::spawn(l, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::move(r).value() : nullptr;
  }
};

bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const size_t p = line.rfind(')');
  return p != std::string::npos && p + 2 < line.size() && line[p + 2] == 'Z';
}

TEST_F(SubprocessRunnerTest, StreamsChunksInOrderAndAnswersRequests) {
  auto r = load({.model_path = "ok", .num_ctx = 77});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->facts().context_length, 77);
  EXPECT_EQ(r->facts().memory_bytes, 1000u);
  std::vector<std::string> texts;
  bool done = false;
  const Status s = r->complete({.prompt = "c"}, [&](const CompletionChunk& c) {
    if (c.done) {
      done = true;
      EXPECT_EQ(c.eval_count, 5);
    } else {
      texts.push_back(c.text);
    }
    return true;
  });
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_TRUE(done);
  EXPECT_EQ(texts, (std::vector<std::string>{"c0", "c1", "c2", "c3", "c4"}));

  auto toks = r->tokenize("ab");
  ASSERT_TRUE(toks.ok());
  EXPECT_EQ(*toks, (std::vector<int32_t>{'a', 'b'}));
  auto text = r->detokenize(*toks);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "ab");
  auto emb = r->embed({"xyz"}, true);
  ASSERT_TRUE(emb.ok());
  ASSERT_EQ(emb->size(), 1u);
  EXPECT_EQ((*emb)[0].prompt_tokens, 3);
  EXPECT_TRUE(r->alive());
  EXPECT_TRUE(runner_alive(*r));
}

TEST_F(SubprocessRunnerTest, ConcurrentCompletionsStreamTogetherAndPingsAnswerMeanwhile) {
  auto r = load({.model_path = "ok", .num_parallel = 4});
  ASSERT_NE(r, nullptr);
  std::vector<std::string> texts(4);
  std::vector<Status> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      results[t] = r->complete({.prompt = std::string(1, char('a' + t))}, [&, t](const CompletionChunk& c) {
        texts[t] += c.text;
        return true;
      });
    });
  }
  EXPECT_TRUE(r->alive());
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    const std::string p(1, char('a' + t));
    EXPECT_TRUE(results[t].is_ok()) << results[t].to_string();
    EXPECT_EQ(texts[t], p + "0" + p + "1" + p + "2" + p + "3" + p + "4");  // each its own, in order
  }

  // A ping is answered while an endless completion streams.
  auto endless = load({.model_path = "endless"});
  ASSERT_NE(endless, nullptr);
  std::atomic<bool> stop{false};
  std::thread streaming([&] {
    (void)endless->complete({.prompt = "x"}, [&](const CompletionChunk&) { return !stop.load(); });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(endless->alive());
  stop = true;
  streaming.join();
}

TEST_F(SubprocessRunnerTest, CancelStopsTheStreamAndKeepsTheRunnerUsable) {
  auto r = load({.model_path = "endless"});
  ASSERT_NE(r, nullptr);
  int seen = 0;
  Status s = r->complete({.prompt = "x"}, [&](const CompletionChunk&) { return ++seen < 3; });
  EXPECT_EQ(s.code(), Code::kCancelled);
  EXPECT_EQ(seen, 3);

  int more = 0;
  CompletionRequest req{.prompt = "y"};
  req.is_cancelled = [&] { return more >= 2; };
  s = r->complete(req, [&](const CompletionChunk&) {
    ++more;
    return true;
  });
  EXPECT_EQ(s.code(), Code::kCancelled);
  auto toks = r->tokenize("q");  // the protocol is still in step
  ASSERT_TRUE(toks.ok()) << toks.status().to_string();
  EXPECT_EQ(*toks, std::vector<int32_t>{'q'});
}

TEST_F(SubprocessRunnerTest, CrashMidRequestFailsThatRequestAndNextLoadWorks) {
  auto r = load({.model_path = "crash"});
  ASSERT_NE(r, nullptr);
  int chunks = 0;
  const Status s = r->complete({.prompt = "p"}, [&](const CompletionChunk&) {
    ++chunks;
    return true;
  });
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find(kRunnerStoppedMessage), std::string::npos) << s.message();
  EXPECT_EQ(chunks, 2);
  EXPECT_FALSE(r->alive());
  EXPECT_NE(r->tokenize("a").status().message().find(kRunnerStoppedMessage), std::string::npos);
  EXPECT_TRUE(process_gone(r->pid()));

  auto factory = make_subprocess_factory("/proc/self/exe");
  auto again = factory({.model_path = "ok"});
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_TRUE((*again)->complete({.prompt = "z"}, [](const CompletionChunk&) { return true; }).is_ok());
}

TEST_F(SubprocessRunnerTest, TheLogSaysWhenARunnerStartsLoadsStopsAndDies) {
  ::testing::internal::CaptureStderr();
  auto ok = load({.model_path = "ok"});
  ASSERT_NE(ok, nullptr);
  const std::string ok_id = "model=ok pid=" + std::to_string(ok->pid());
  ok.reset();
  auto crash = load({.model_path = "crash"});
  ASSERT_NE(crash, nullptr);
  (void)crash->complete({.prompt = "p"}, [](const CompletionChunk&) { return true; });
  const std::string crash_id = "model=crash pid=" + std::to_string(crash->pid());
  crash.reset();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("runner started: " + ok_id), std::string::npos) << log;
  EXPECT_NE(log.find("runner loaded: " + ok_id + " memory=0MiB device_memory=0MiB"), std::string::npos)
      << log;
  EXPECT_NE(log.find("runner stopped: " + ok_id), std::string::npos) << log;
  EXPECT_EQ(log.find("runner died: " + ok_id), std::string::npos) << log;
  EXPECT_NE(log.find("runner died: " + crash_id), std::string::npos) << log;
  EXPECT_NE(log.find("signal: Killed"), std::string::npos) << log;
  EXPECT_EQ(log.find("runner stopped: " + crash_id), std::string::npos) << log;
}

TEST_F(SubprocessRunnerTest, HungChildIsKilledAfterTheStallTimeout) {
  auto r = load({.model_path = "hang"}, {.stall_timeout = std::chrono::milliseconds(200)});
  ASSERT_NE(r, nullptr);
  const Status s = r->complete({.prompt = "p"}, [](const CompletionChunk&) { return true; });
  EXPECT_NE(s.message().find(kRunnerStoppedMessage), std::string::npos) << s.message();
  EXPECT_TRUE(process_gone(r->pid()));
}

TEST_F(SubprocessRunnerTest, LoadFailureIsReportedAndTheChildReaped) {
  auto r = SubprocessRunner::spawn({.model_path = "fail-load"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "fake load failure");
}

TEST_F(SubprocessRunnerTest, DestroyingTheRunnerKillsTheChild) {
  auto r = load({.model_path = "ok"});
  ASSERT_NE(r, nullptr);
  const pid_t pid = r->pid();
  EXPECT_FALSE(process_gone(pid));
  r.reset();
  EXPECT_TRUE(process_gone(pid));
}

TEST_F(SubprocessRunnerTest, KillingTheServerKillsItsRunner) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  // The middle process's environment, built before fork (only exec is safe after it).
  std::vector<std::string> env = {"PADDOCK_FAKE_RUNNER_MIDDLE=" + std::to_string(fds[1])};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("PADDOCK_FAKE_RUNNER_", 0) != 0) env.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    ::close(fds[0]);
    ::execle("/proc/self/exe", "/proc/self/exe", nullptr, envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  pid_t runner = -1;
  ASSERT_EQ(::read(fds[0], &runner, sizeof runner), ssize_t(sizeof runner));
  ::close(fds[0]);
  ASSERT_GT(runner, 0);
  EXPECT_FALSE(process_gone(runner));
  ::kill(middle, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(middle, &status, 0), middle);
  bool gone = false;  // the kernel delivers the death signal promptly; allow a slow machine 30 s
  for (int i = 0; i < 3000 && !(gone = process_gone(runner)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone);
}

}  // namespace
}  // namespace paddock::runner
