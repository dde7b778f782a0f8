// A Runner that lives in a `paddock runner` child process (runner_child.h), so a model that
// crashes or hangs takes down only its own requests. The server's RunnerFactory.
// Invariants: the child is started per load and dies with the server (PR_SET_PDEATHSIG);
// destroying the SubprocessRunner kills and reaps it, so unloading frees its memory for
// sure; once the child is gone every call fails with kRunnerStoppedMessage and alive() is
// false, so the scheduler loads a fresh one on the next request.
//   runner::RunnerFactory f = make_subprocess_factory("/proc/self/exe");
//   PADDOCK_ASSIGN(auto r, f({.model_path = blob}));   // spawns `paddock runner --model blob`
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "runner/runner.h"
#include "runner/runner_protocol.h"

namespace paddock::runner {

inline constexpr std::string_view kRunnerStoppedMessage =
    "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error";

struct SubprocessOptions {
  std::string self_exe = "/proc/self/exe";  // the paddock binary; it must have a `runner` command
  std::chrono::milliseconds load_timeout = std::chrono::minutes(5);
  std::chrono::milliseconds stall_timeout = std::chrono::minutes(5);  // silence while busy = hung
  std::chrono::milliseconds ping_timeout = std::chrono::seconds(10);
  std::chrono::milliseconds cancel_poll = std::chrono::milliseconds(50);
};

class SubprocessRunner final : public Runner {
 public:
  static Result<std::unique_ptr<SubprocessRunner>> spawn(const LoadOptions& load,
                                                         const SubprocessOptions& options);
  ~SubprocessRunner() override;
  SubprocessRunner(const SubprocessRunner&) = delete;
  SubprocessRunner& operator=(const SubprocessRunner&) = delete;

  ModelFacts facts() const override { return facts_; }
  Status complete(const CompletionRequest& request, const ChunkFn& on_chunk) override;
  Result<std::vector<Embedding>> embed(const std::vector<std::string>& texts, bool truncate) override;
  Result<std::vector<int32_t>> tokenize(std::string_view text) override;
  Result<std::string> detokenize(std::span<const int32_t> tokens) override;

  // Health check: a ping answered within ping_timeout. While a request runs (busy) it only
  // says whether the child is known to be gone.
  bool alive();
  pid_t pid() const { return pid_; }

 private:
  SubprocessRunner(pid_t pid, int fd, SubprocessOptions options);
  Result<nlohmann::json> call(const nlohmann::json& message, std::chrono::milliseconds timeout);
  // Marks the child gone, kills and reaps it; returns the error for the caller's request.
  Status fail(std::string_view why);
  void kill_and_reap();

  pid_t pid_;
  int fd_;
  SubprocessOptions options_;
  FrameReader in_;
  ModelFacts facts_;
  std::mutex mu_;  // one call at a time on the socket
  std::atomic<bool> dead_{false};
  bool reaped_ = false;
};

RunnerFactory make_subprocess_factory(std::string self_exe);
RunnerFactory make_subprocess_factory(SubprocessOptions options);

// Whether a Runner can still serve: pings a SubprocessRunner; true for any other Runner.
// (The scheduler's health check.)
bool runner_alive(Runner& runner);

}  // namespace paddock::runner
