// A Runner that lives in a `paddock runner` child process (runner_child.h), so a model that
// crashes or hangs takes down only its own requests. The server's RunnerFactory.
// Invariants: the child is started per load and dies with the server (PR_SET_PDEATHSIG);
// destroying the SubprocessRunner kills and reaps it, so unloading frees its memory for
// sure; once the child is gone every call fails with kRunnerStoppedMessage and alive() is
// false, so the scheduler loads a fresh one on the next request. Calls may come from several
// threads at once: each request has an id, and a reader thread routes the child's frames to
// the waiting caller (so num_parallel completions stream together). The server log gets a
// line when a runner starts, loads, fails to load, is stopped, or dies (model, pid, memory,
// exit status or signal).
//   runner::RunnerFactory f = make_subprocess_factory("/proc/self/exe");
//   PADDOCK_ASSIGN(auto r, f({.model_path = blob}));   // spawns `paddock runner --model blob`
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

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

  // Health check: a ping answered within ping_timeout (also while completions run).
  bool alive();
  pid_t pid() const { return pid_; }

 private:
  SubprocessRunner(pid_t pid, int fd, std::string model, SubprocessOptions options);
  // Sends `message` as request `id` (a fresh one from next_id()).
  Status send(nlohmann::json message, int64_t id);
  int64_t next_id();
  // The next message for request `id`: kUnavailable kTimeoutMessage after `timeout`, the
  // runner-stopped error once the child is gone.
  Result<nlohmann::json> receive(int64_t id, std::chrono::milliseconds timeout);
  void forget(int64_t id);
  Result<nlohmann::json> call(nlohmann::json message, std::chrono::milliseconds timeout);
  // The reader thread: routes each frame to its request's inbox until EOF or a bad frame.
  void read_loop();
  // Marks the child gone (first reason wins), kills and reaps it; returns the error for the
  // caller's request.
  Status fail(std::string_view why);
  void kill_and_reap_locked();

  pid_t pid_;
  int fd_;
  std::string model_;  // the model file, for the server log
  SubprocessOptions options_;
  FrameReader in_;
  ModelFacts facts_;
  std::mutex write_mu_;  // one frame at a time on the socket
  std::mutex mu_;        // everything below
  std::condition_variable arrived_;
  std::map<int64_t, std::deque<nlohmann::json>> inbox_;  // by request id, while the request runs
  int64_t last_id_ = 0;
  bool dead_ = false;
  std::string death_;  // why the child is gone
  bool reaped_ = false;
  std::thread reader_;
};

RunnerFactory make_subprocess_factory(std::string self_exe);
RunnerFactory make_subprocess_factory(SubprocessOptions options);

// Whether a Runner can still serve: pings a SubprocessRunner; true for any other Runner.
// (The scheduler's health check.)
bool runner_alive(Runner& runner);

}  // namespace paddock::runner
