#include "server/http_server.h"

#include <dirent.h>
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "base/log.h"

namespace paddock::server {

namespace {

std::atomic<bool> g_stop{false};

// The first SIGINT/SIGTERM drains (see serve); a second one exits at once.
extern "C" void on_signal(int) {
  if (!g_stop.exchange(true)) return;
  static constexpr char kMessage[] = "second signal: exiting now\n";
  (void)!::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  ::_exit(1);
}

constexpr auto kDrainDeadline = std::chrono::seconds(10);
// One thread per connection up to this many; past it a connection gets a 503 at once.
constexpr size_t kMaxConnections = 4096;
constexpr int kListenBacklog = 512;

thread_local bool t_over_capacity = false;

// httplib's fixed pool let 64 idle (slowloris) or queued connections freeze every endpoint,
// and queued requests never reached the scheduler's own 503. A thread per connection keeps
// every request moving; the cap bounds the threads, and shutdown waits only until a deadline.
class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(std::chrono::steady_clock::time_point* deadline)
      : state_(std::make_shared<State>()), deadline_(deadline) {}

  void enqueue(std::function<void()> fn) override {
    bool over;
    {
      std::lock_guard lk(state_->mu);
      over = state_->active >= kMaxConnections;
      ++state_->active;
    }
    std::thread([state = state_, over, fn = std::move(fn)] {
      t_over_capacity = over;
      fn();
      std::lock_guard lk(state->mu);
      --state->active;
      state->cv.notify_all();
    }).detach();
  }

  // Connections still open at the deadline are left to the process exit.
  void shutdown() override {
    std::unique_lock lk(state_->mu);
    state_->cv.wait_until(lk, *deadline_, [&] { return state_->active == 0; });
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    size_t active = 0;
  };
  std::shared_ptr<State> state_;
  const std::chrono::steady_clock::time_point* deadline_;
};

// A socket end's numeric host (as httplib reports it) and port; empty when it has none.
std::string socket_end(int fd, bool peer, int* port) {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  auto* sa = reinterpret_cast<sockaddr*>(&a);
  if ((peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len)) != 0) return {};
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (::getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return {};
  }
  *port = std::atoi(serv);
  return host;
}

// httplib 0.11 keeps its sockets to itself (the handler's connection, the listener), so
// find one among the process's open sockets. -1 when none matches.
int find_socket(const std::function<bool(int fd)>& match) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  int found = -1;
  while (const dirent* e = ::readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    struct stat st;
    if (fd > 2 && ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && match(fd)) {
      found = fd;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

int connection_socket(const httplib::Request& req) {
  return find_socket([&](int fd) {
    int peer_port = -1, local_port = -1;
    return socket_end(fd, true, &peer_port) == req.remote_addr && peer_port == req.remote_port &&
           socket_end(fd, false, &local_port) == req.local_addr && local_port == req.local_port;
  });
}

// Debian's httplib listens with a backlog of 5, so bursts of connections were refused;
// listen() again on the bound socket raises it.
void raise_listen_backlog(int port) {
  const int listener = find_socket([&](int fd) {
    int listening = 0, local_port = -1;
    socklen_t len = sizeof(listening);
    return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening != 0 &&
           !socket_end(fd, false, &local_port).empty() && local_port == port;
  });
  if (listener < 0 || ::listen(listener, kListenBacklog) != 0) log_warn("could not raise the listen backlog");
}

// True once the client closed its end (a request it no longer waits for).
bool peer_closed(int fd) {
  pollfd p{.fd = fd, .events = POLLRDHUP, .revents = 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

HttpRequest to_request(const httplib::Request& req, const httplib::ContentReader* reader) {
  HttpRequest r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.headers) r.headers.emplace(k, v);
  if (const int fd = connection_socket(req); fd >= 0) r.client_gone = [fd] { return peer_closed(fd); };
  if (reader) {
    r.body_reader = [reader](const std::function<bool(const char*, size_t)>& sink) -> Status {
      if (!(*reader)([&](const char* data, size_t n) { return sink(data, n); })) {
        return io_error("reading the request body failed");
      }
      return Status::ok();
    };
  } else {
    r.body = req.body;
  }
  return r;
}

void apply(const HttpResponse& in, httplib::Response& out) {
  out.status = in.status;
  for (const auto& [k, v] : in.headers) out.set_header(k, v);
  if (in.stream) {
    auto stream = in.stream;
    out.set_chunked_content_provider(in.content_type, [stream](size_t, httplib::DataSink& sink) {
      stream([&](std::string_view s) { return sink.write(s.data(), s.size()); });
      sink.done();
      return true;
    });
  } else {
    out.set_content(in.body, in.content_type);
  }
}

}  // namespace

Status serve(Api& api, const HostPort& where) {
  httplib::Server http;
  auto deadline = std::chrono::steady_clock::time_point::max();
  http.new_task_queue = [&deadline] { return new ConnectionThreads(&deadline); };
  http.set_payload_max_length(std::numeric_limits<size_t>::max());  // JSON bodies are limited by Api
  // Per read and write: a client that sends or reads nothing for this long is dropped.
  http.set_read_timeout(std::chrono::seconds(30));
  http.set_write_timeout(std::chrono::seconds(60));
  // Api::handle answers its handlers' exceptions itself; anything thrown around it (an
  // allocation failure) must not reach the client as httplib's EXCEPTION_WHAT header.
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    log_error("unhandled exception on " + req.method + " " + req.path);
    res.status = 500;
    res.set_content("{\"error\":\"internal server error\"}", "application/json; charset=utf-8");
  });

  auto dispatch = [&api](const httplib::Request& req, httplib::Response& res,
                         const httplib::ContentReader* reader) {
    const auto t0 = std::chrono::steady_clock::now();
    HttpRequest r = to_request(req, reader);
    HttpResponse out = api.handle(r);
    apply(out, res);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    char line[512];
    std::snprintf(line, sizeof(line), "[GIN] | %3d | %12.3fms | %15s | %-7s %s", out.status, ms,
                  req.remote_addr.c_str(), req.method.c_str(), req.path.c_str());
    log_info(line);
  };
  auto plain = [dispatch](const httplib::Request& req, httplib::Response& res) {
    dispatch(req, res, nullptr);
  };
  auto blob = [dispatch, plain, max_body = api.max_body_bytes()](
                  const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    if (req.path.rfind("/api/blobs/", 0) == 0) {
      dispatch(req, res, &reader);
      return;
    }
    // Other bodies are read whole, up to the Api's limit.
    std::string body;
    const bool ok = reader([&](const char* data, size_t n) {
      body.append(data, n);
      return body.size() <= max_body;
    });
    if (!ok) {
      res.status = 413;
      res.set_content("{\"error\":\"request body too large\"}", "application/json; charset=utf-8");
      log_info("[GIN] | 413 | " + req.method + " " + req.path);
      return;
    }
    httplib::Request copy = req;
    copy.body = std::move(body);
    plain(copy, res);
  };
  const std::string any = ".*";
  http.Get(any, plain);
  http.Delete(any, blob);
  http.Options(any, plain);
  http.Post(any, blob);
  http.Put(any, blob);
  http.Patch(any, blob);
  // HEAD is answered by the GET handlers in httplib; give it the Api explicitly instead.
  http.set_pre_routing_handler([dispatch](const httplib::Request& req, httplib::Response& res) {
    if (t_over_capacity) {
      res.status = 503;
      res.set_header("Connection", "close");
      res.set_content("{\"error\":\"server busy, please try again. maximum pending requests exceeded\"}",
                      "application/json; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    dispatch(req, res, nullptr);
    return httplib::Server::HandlerResponse::Handled;
  });

  if (!http.bind_to_port(where.host, where.port)) {
    return error(Code::kUnavailable,
                 "listen tcp " + where.to_string() + ": bind: address already in use or not available");
  }
  raise_listen_backlog(where.port);
  g_stop.store(false);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // Shutdown: /health turns 503, new requests are refused, running ones are cancelled (each
  // stream ends with an error line) and get until the deadline to finish; then the listener
  // closes. Whatever still runs at the deadline ends with the process (runners die with it).
  std::thread watcher([&] {
    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    deadline = std::chrono::steady_clock::now() + kDrainDeadline;
    log_info("shutting down: cancelling " + std::to_string(api.in_flight()) + " requests");
    api.begin_drain();
    while (api.in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    http.stop();
  });
  log_info("Listening on " + where.to_string() + " (version paddock)");
  http.listen_after_bind();
  g_stop.store(true);
  watcher.join();
  if (api.in_flight() > 0) {
    log_warn("shutdown deadline passed with " + std::to_string(api.in_flight()) +
             " requests running; exiting");
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return Status::ok();
}

}  // namespace paddock::server
