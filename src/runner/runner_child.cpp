#include "runner/runner_child.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "runner/runner_protocol.h"

namespace paddock::runner {

namespace {

using nlohmann::json;

Result<int64_t> parse_int(std::string_view flag, std::string_view v) {
  int64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    return invalid_argument(std::string(flag) + " expects an integer, found \"" + std::string(v) + "\"");
  }
  return out;
}

// The child's side of the connection: frames out under one lock, and the cancel flags of
// the completions in flight by request id.
class Connection {
 public:
  explicit Connection(int fd) : fd_(fd) {}
  Status send(json message, int64_t id) {
    message["id"] = id;
    std::lock_guard lock(write_mu_);
    return write_frame(fd_, message);
  }
  std::shared_ptr<std::atomic<bool>> start(int64_t id) {
    std::lock_guard lock(mu_);
    auto flag = std::make_shared<std::atomic<bool>>(false);
    flags_[id] = flag;
    return flag;
  }
  void finish(int64_t id) {
    std::lock_guard lock(mu_);
    flags_.erase(id);
  }
  void cancel(int64_t id) {
    std::lock_guard lock(mu_);
    if (auto it = flags_.find(id); it != flags_.end()) *it->second = true;
  }
  void cancel_all() {
    std::lock_guard lock(mu_);
    for (auto& [id, flag] : flags_) *flag = true;
  }

 private:
  int fd_;
  std::mutex write_mu_, mu_;
  std::map<int64_t, std::shared_ptr<std::atomic<bool>>> flags_;
};

// Serves one completion on its own thread; `cancel` with its id stops it.
void serve_complete(Connection& conn, Runner& runner, const json& msg, int64_t id,
                    std::shared_ptr<std::atomic<bool>> cancelled) {
  auto parsed = completion_request_from_json(msg.value("request", json::object()));
  if (!parsed.ok()) {
    (void)conn.send(error_message(parsed.status()), id);
    conn.finish(id);
    return;
  }
  CompletionRequest req = std::move(parsed).value();
  bool sent_done = false;
  req.is_cancelled = [cancelled] { return cancelled->load(); };
  const ChunkFn on_chunk = [&](const CompletionChunk& c) {
    if (*cancelled) return false;
    if (!conn.send({{"type", c.done ? "done" : "chunk"}, {"chunk", to_json(c)}}, id).is_ok()) {
      *cancelled = true;
      return false;
    }
    sent_done = c.done;
    return true;
  };
  const Status s = runner.complete(req, on_chunk);
  if (!s.is_ok()) {
    (void)conn.send(error_message(s), id);
  } else if (*cancelled) {
    (void)conn.send(error_message(Status(Code::kCancelled, "request canceled")), id);
  } else if (!sent_done) {
    CompletionChunk last;
    last.done = true;
    last.done_reason = "stop";
    (void)conn.send({{"type", "done"}, {"chunk", to_json(last)}}, id);
  }
  conn.finish(id);
}

Result<json> serve_request(Runner& runner, const json& msg) {
  const std::string type = msg["type"].get<std::string>();
  try {
    if (type == "ping") return json{{"type", "pong"}};
    if (type == "facts") return json{{"type", "result"}, {"facts", to_json(runner.facts())}};
    if (type == "tokenize") {
      PADDOCK_ASSIGN(auto tokens, runner.tokenize(msg.at("text").get<std::string>()));
      return json{{"type", "result"}, {"tokens", tokens}};
    }
    if (type == "detokenize") {
      const auto tokens = msg.at("tokens").get<std::vector<int32_t>>();
      PADDOCK_ASSIGN(auto text, runner.detokenize(tokens));
      return json{{"type", "result"}, {"text", text}};
    }
    if (type == "embed") {
      PADDOCK_ASSIGN(auto embs, runner.embed(msg.at("texts").get<std::vector<std::string>>(),
                                             msg.at("truncate").get<bool>()));
      json arr = json::array();
      for (const auto& e : embs) arr.push_back({{"values", e.values}, {"prompt_tokens", e.prompt_tokens}});
      return json{{"type", "result"}, {"embeddings", std::move(arr)}};
    }
  } catch (const json::exception& e) {
    return corrupt(std::string("runner protocol: bad ") + type + " request: " + e.what());
  }
  return invalid_argument("runner protocol: unknown message type \"" + type + "\"");
}

}  // namespace

std::vector<std::string> runner_command_line(const ChildArgs& a) {
  std::vector<std::string> out = {
      "runner",  "--fd",           std::to_string(a.fd), "--parent-pid", std::to_string(a.parent_pid),
      "--model", a.load.model_path};
  auto add = [&](const char* flag, const std::optional<int64_t>& v) {
    if (v) out.insert(out.end(), {flag, std::to_string(*v)});
  };
  if (a.load.num_ctx > 0) out.insert(out.end(), {"--ctx", std::to_string(a.load.num_ctx)});
  if (a.load.num_parallel > 1) out.insert(out.end(), {"--parallel", std::to_string(a.load.num_parallel)});
  add("--batch", a.load.num_batch);
  add("--threads", a.load.num_thread);
  add("--gpu", a.load.num_gpu);
  if (!a.load.use_mmap) out.push_back("--no-mmap");
  for (const auto& p : a.load.adapter_paths) out.insert(out.end(), {"--adapter", p});
  for (const auto& p : a.load.projector_paths) out.insert(out.end(), {"--projector", p});
  return out;
}

Result<ChildArgs> parse_runner_command_line(int argc, char** argv) {
  ChildArgs a;
  bool have_fd = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--no-mmap") {
      a.load.use_mmap = false;
      continue;
    }
    if (i + 1 >= argc) return invalid_argument("runner: " + std::string(flag) + " needs a value");
    const std::string_view v = argv[++i];
    if (flag == "--model") {
      a.load.model_path = v;
    } else if (flag == "--adapter") {
      a.load.adapter_paths.emplace_back(v);
    } else if (flag == "--projector") {
      a.load.projector_paths.emplace_back(v);
    } else {
      PADDOCK_ASSIGN(int64_t n, parse_int(flag, v));
      if (flag == "--fd") {
        a.fd = int(n);
        have_fd = true;
      } else if (flag == "--parent-pid") {
        a.parent_pid = long(n);
      } else if (flag == "--ctx") {
        a.load.num_ctx = n;
      } else if (flag == "--parallel") {
        if (n < 1) return invalid_argument("runner: --parallel must be at least 1");
        a.load.num_parallel = n;
      } else if (flag == "--batch") {
        a.load.num_batch = n;
      } else if (flag == "--threads") {
        a.load.num_thread = n;
      } else if (flag == "--gpu") {
        a.load.num_gpu = n;
      } else {
        return invalid_argument("runner: unknown flag " + std::string(flag));
      }
    }
  }
  if (!have_fd || a.fd < 0) return invalid_argument("runner: --fd is required (the server starts runners)");
  if (a.load.model_path.empty()) return invalid_argument("runner: --model is required");
  return a;
}

int run_runner_child(int argc, char** argv, const RunnerFactory& factory) {
  auto parsed = parse_runner_command_line(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "Error: %s\n", parsed.status().message().c_str());
    return 2;
  }
  const ChildArgs args = std::move(parsed).value();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (args.parent_pid != 0 && ::getppid() != pid_t(args.parent_pid))
    return 1;  // the parent died before prctl
  ::signal(SIGPIPE, SIG_IGN);

  auto loaded = factory(args.load);
  if (!loaded.ok()) {
    (void)write_frame(args.fd, error_message(loaded.status()));
    return 1;
  }
  std::unique_ptr<Runner> runner = std::move(loaded).value();
  if (!write_frame(args.fd, {{"type", "loaded"}, {"facts", to_json(runner->facts())}}).is_ok()) return 1;

  // Completions and embeddings run on their own threads (several at once when the runner
  // batches); the rest is answered here, so pings stay prompt while a long request runs.
  FrameReader in(args.fd);
  Connection conn(args.fd);
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  std::vector<Worker> workers;
  const auto spawn = [&workers](std::function<void()> work) {
    std::erase_if(workers, [](Worker& w) {  // join the ones that ended, so threads do not pile up
      if (!*w.finished) return false;
      w.thread.join();
      return true;
    });
    auto finished = std::make_shared<std::atomic<bool>>(false);
    workers.push_back({std::thread([work = std::move(work), finished] {
                         work();
                         *finished = true;
                       }),
                       finished});
  };
  int code = 0;
  for (;;) {
    auto msg = in.read(std::chrono::hours(24 * 365));
    if (!msg.ok()) {
      if (msg.status().code() == Code::kUnavailable) continue;
      code = msg.status().code() == Code::kIo ? 0 : 1;  // EOF: the parent unloaded us
      break;
    }
    const json& m = *msg;
    const int64_t id = m.value("id", int64_t{0});
    if (m["type"] == "complete") {
      spawn([&conn, &runner, m, id, flag = conn.start(id)] { serve_complete(conn, *runner, m, id, flag); });
    } else if (m["type"] == "cancel") {
      conn.cancel(id);  // a no-op when that completion already ended
    } else if (m["type"] == "embed") {
      spawn([&conn, &runner, m, id] {
        auto reply = serve_request(*runner, m);
        (void)conn.send(reply.ok() ? *reply : error_message(reply.status()), id);
      });
    } else {
      auto reply = serve_request(*runner, m);
      if (!conn.send(reply.ok() ? *reply : error_message(reply.status()), id).is_ok()) {
        code = 1;
        break;
      }
    }
  }
  conn.cancel_all();
  for (Worker& w : workers) w.thread.join();
  return code;
}

}  // namespace paddock::runner
