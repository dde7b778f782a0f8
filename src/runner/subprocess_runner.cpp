#include "runner/subprocess_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <thread>

#include "base/log.h"
#include "runner/runner_child.h"

namespace paddock::runner {

namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr int kChildFd = 3;

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal: ") + ::strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// PR_SET_PDEATHSIG fires when the parent THREAD ends, not the process: a child forked from
// a short-lived request thread would be killed with it. So every fork happens on one thread
// that lives as long as the process.
pid_t fork_on_spawner_thread(std::function<pid_t()> fork_fn) {
  struct Spawner {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::packaged_task<pid_t()>> jobs;
  };
  static Spawner* const spawner = [] {
    auto* s = new Spawner;  // never destroyed: runners may be spawned until the process exits
    std::thread([s] {
      for (;;) {
        std::unique_lock lock(s->mu);
        s->cv.wait(lock, [s] { return !s->jobs.empty(); });
        auto job = std::move(s->jobs.front());
        s->jobs.pop_front();
        lock.unlock();
        job();
      }
    }).detach();
    return s;
  }();
  std::packaged_task<pid_t()> task(std::move(fork_fn));
  std::future<pid_t> pid = task.get_future();
  {
    std::lock_guard lock(spawner->mu);
    spawner->jobs.push_back(std::move(task));
  }
  spawner->cv.notify_one();
  return pid.get();
}

}  // namespace

SubprocessRunner::SubprocessRunner(pid_t pid, int fd, std::string model, SubprocessOptions options)
    : pid_(pid), fd_(fd), model_(std::move(model)), options_(std::move(options)), in_(fd) {}

SubprocessRunner::~SubprocessRunner() {
  {
    std::lock_guard lock(mu_);
    if (!dead_) log_info("runner stopped: model=" + model_ + " pid=" + std::to_string(pid_));
    kill_and_reap_locked();  // the reader sees EOF and ends
  }
  if (reader_.joinable()) reader_.join();
  ::close(fd_);
}

void SubprocessRunner::kill_and_reap_locked() {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  dead_ = true;
}

Status SubprocessRunner::fail(std::string_view why) {
  std::lock_guard lock(mu_);
  const bool stopped = dead_ && death_.empty();  // by the destructor: the reader saw its kill
  if (death_.empty()) {
    death_ = why;
    if (!reaped_) {
      // The child closed its socket: give it a moment to finish exiting so the log says why.
      int status = 0;
      pid_t r = 0;
      for (int i = 0; i < 20 && (r = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
        std::this_thread::sleep_for(milliseconds(10));
      }
      if (r == pid_) {
        reaped_ = true;
        death_ += ", " + describe_exit(status);
      }
    }
    if (!stopped) log_error("runner died: model=" + model_ + " pid=" + std::to_string(pid_) + ": " + death_);
  }
  kill_and_reap_locked();
  dead_ = true;
  arrived_.notify_all();
  return internal_error(std::string(kRunnerStoppedMessage) + " (" + death_ + ")");
}

Result<std::unique_ptr<SubprocessRunner>> SubprocessRunner::spawn(const LoadOptions& load,
                                                                  const SubprocessOptions& options) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return io_error(std::string("runner: socketpair failed: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  const std::vector<std::string> args =
      runner_command_line(ChildArgs{.fd = kChildFd, .parent_pid = long(parent), .load = load});
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(options.self_exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = fork_on_spawner_thread([&]() -> pid_t {
    const pid_t child = ::fork();
    if (child < 0) return -errno;  // errno belongs to the spawner thread
    if (child != 0) return child;
    // In the child: only async-signal-safe calls until execv.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (sv[1] == kChildFd) {
      ::fcntl(kChildFd, F_SETFD, 0);
    } else if (::dup2(sv[1], kChildFd) < 0) {
      ::_exit(127);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  });
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return io_error(std::string("runner: fork failed: ") + std::strerror(-pid));
  }
  ::close(sv[1]);
  log_info("runner started: model=" + load.model_path + " pid=" + std::to_string(pid));
  std::unique_ptr<SubprocessRunner> r(new SubprocessRunner(pid, sv[0], load.model_path, options));
  auto msg = r->in_.read(options.load_timeout);
  if (!msg.ok()) {
    const bool timeout = msg.status().code() == Code::kUnavailable;
    Status s = r->fail(timeout ? "load timed out" : msg.status().message());
    return internal_error("model runner failed to load " + load.model_path + ": " + s.message());
  }
  if ((*msg)["type"] == "error") {
    Status s = status_from_error(*msg);
    log_warn("runner failed to load: model=" + load.model_path + " pid=" + std::to_string(pid) + ": " +
             s.message());
    return s;
  }
  if ((*msg)["type"] != "loaded") return r->fail("unexpected first message " + (*msg)["type"].dump());
  PADDOCK_ASSIGN(r->facts_, model_facts_from_json(msg->value("facts", json::object())));
  log_info("runner loaded: model=" + load.model_path + " pid=" + std::to_string(pid) +
           " memory=" + std::to_string(r->facts_.memory_bytes >> 20) + "MiB" +
           " device_memory=" + std::to_string(r->facts_.device_memory_bytes >> 20) + "MiB");
  r->reader_ = std::thread([raw = r.get()] { raw->read_loop(); });
  return r;
}

void SubprocessRunner::read_loop() {
  for (;;) {
    auto msg = in_.read(std::chrono::hours(24));
    if (!msg.ok()) {
      if (msg.status().code() == Code::kUnavailable) continue;
      (void)fail(msg.status().message());
      return;
    }
    std::lock_guard lock(mu_);
    const int64_t id = msg->value("id", int64_t{0});
    if (auto it = inbox_.find(id); it != inbox_.end()) {
      it->second.push_back(std::move(msg).value());
      arrived_.notify_all();
    }  // else: the answer to a request that gave up (cancelled, timed out)
  }
}

int64_t SubprocessRunner::next_id() {
  std::lock_guard lock(mu_);
  const int64_t id = ++last_id_;
  inbox_[id];
  return id;
}

void SubprocessRunner::forget(int64_t id) {
  std::lock_guard lock(mu_);
  inbox_.erase(id);
}

Status SubprocessRunner::send(json message, int64_t id) {
  {
    std::lock_guard lock(mu_);
    if (dead_) return internal_error(std::string(kRunnerStoppedMessage) + " (" + death_ + ")");
  }
  message["id"] = id;
  std::lock_guard lock(write_mu_);
  if (Status s = write_frame(fd_, message); !s.is_ok()) return fail(s.message());
  return Status::ok();
}

Result<json> SubprocessRunner::receive(int64_t id, milliseconds timeout) {
  std::unique_lock lock(mu_);
  auto& box = inbox_[id];
  if (!arrived_.wait_for(lock, timeout, [&] { return !box.empty() || dead_; })) {
    return Status(Code::kUnavailable, std::string(kTimeoutMessage));
  }
  if (box.empty()) return internal_error(std::string(kRunnerStoppedMessage) + " (" + death_ + ")");
  json m = std::move(box.front());
  box.pop_front();
  return m;
}

Result<json> SubprocessRunner::call(json message, milliseconds timeout) {
  const int64_t id = next_id();
  Status sent = send(std::move(message), id);
  auto reply = sent.is_ok() ? receive(id, timeout) : Result<json>(sent);
  forget(id);
  if (!reply.ok()) {
    if (reply.status().code() == Code::kUnavailable) return fail("no reply");
    return reply.status();
  }
  if ((*reply)["type"] == "error") return status_from_error(*reply);
  return reply;
}

Status SubprocessRunner::complete(const CompletionRequest& request, const ChunkFn& on_chunk) {
  const int64_t id = next_id();
  struct Forget {
    SubprocessRunner* r;
    int64_t id;
    ~Forget() { r->forget(id); }
  } forget_on_return{this, id};
  PADDOCK_TRY(send({{"type", "complete"}, {"request", to_json(request)}}, id));
  bool cancel_sent = false;
  auto cancel = [&]() -> Status {
    cancel_sent = true;
    return send({{"type", "cancel"}}, id);
  };
  auto last_frame = std::chrono::steady_clock::now();
  for (;;) {
    if (!cancel_sent && request.is_cancelled && request.is_cancelled()) PADDOCK_TRY(cancel());
    auto msg = receive(id, options_.cancel_poll);
    if (!msg.ok()) {
      if (msg.status().code() != Code::kUnavailable) return msg.status();
      if (std::chrono::steady_clock::now() - last_frame > options_.stall_timeout) {
        return fail("no output for " + std::to_string(options_.stall_timeout.count()) + " ms");
      }
      continue;
    }
    last_frame = std::chrono::steady_clock::now();
    const json& m = *msg;
    if (m["type"] == "error") return status_from_error(m);
    if (m["type"] != "chunk" && m["type"] != "done") return fail("unexpected message " + m["type"].dump());
    if (cancel_sent) continue;  // draining until the child confirms the cancel
    PADDOCK_ASSIGN(CompletionChunk chunk, completion_chunk_from_json(m.value("chunk", json::object())));
    const bool keep_going = on_chunk(chunk);
    if (m["type"] == "done") return Status::ok();
    if (!keep_going) PADDOCK_TRY(cancel());
  }
}

Result<std::vector<Embedding>> SubprocessRunner::embed(const std::vector<std::string>& texts, bool truncate) {
  PADDOCK_ASSIGN(json reply,
                 call({{"type", "embed"}, {"texts", texts}, {"truncate", truncate}}, options_.stall_timeout));
  try {
    std::vector<Embedding> out;
    for (const auto& e : reply.at("embeddings")) {
      out.push_back({e.at("values").get<std::vector<float>>(), e.at("prompt_tokens").get<int64_t>()});
    }
    return out;
  } catch (const json::exception& e) {
    return corrupt(std::string("runner protocol: bad embed reply: ") + e.what());
  }
}

Result<std::vector<int32_t>> SubprocessRunner::tokenize(std::string_view text) {
  PADDOCK_ASSIGN(json reply,
                 call({{"type", "tokenize"}, {"text", std::string(text)}}, options_.stall_timeout));
  try {
    return reply.at("tokens").get<std::vector<int32_t>>();
  } catch (const json::exception& e) {
    return corrupt(std::string("runner protocol: bad tokenize reply: ") + e.what());
  }
}

Result<std::string> SubprocessRunner::detokenize(std::span<const int32_t> tokens) {
  const std::vector<int32_t> v(tokens.begin(), tokens.end());
  PADDOCK_ASSIGN(json reply, call({{"type", "detokenize"}, {"tokens", v}}, options_.stall_timeout));
  try {
    return reply.at("text").get<std::string>();
  } catch (const json::exception& e) {
    return corrupt(std::string("runner protocol: bad detokenize reply: ") + e.what());
  }
}

bool SubprocessRunner::alive() {
  {
    std::lock_guard lock(mu_);
    if (dead_) return false;
  }
  auto reply = call({{"type", "ping"}}, options_.ping_timeout);
  return reply.ok() && (*reply)["type"] == "pong";
}

RunnerFactory make_subprocess_factory(std::string self_exe) {
  SubprocessOptions o;
  o.self_exe = std::move(self_exe);
  return make_subprocess_factory(std::move(o));
}

RunnerFactory make_subprocess_factory(SubprocessOptions options) {
  return [options = std::move(options)](const LoadOptions& load) -> Result<std::unique_ptr<Runner>> {
    PADDOCK_ASSIGN(std::unique_ptr<SubprocessRunner> r, SubprocessRunner::spawn(load, options));
    return std::unique_ptr<Runner>(std::move(r));
  };
}

bool runner_alive(Runner& runner) {
  auto* sub = dynamic_cast<SubprocessRunner*>(&runner);
  return sub == nullptr || sub->alive();
}

}  // namespace paddock::runner
