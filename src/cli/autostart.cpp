#include "cli/autostart.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "base/env.h"

namespace paddock::cli {

namespace {

constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kPollInterval = std::chrono::milliseconds(100);

std::string log_path() {
  const char* home = std::getenv("HOME");
  const std::filesystem::path dir =
      std::filesystem::path(home != nullptr && *home ? home : "/tmp") / ".paddock" / "logs";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return (dir / "server.log").string();
}

bool is_local(const std::string& host) {
  return server::is_loopback_host(host) || host == "0.0.0.0" || host == "::" || host.empty();
}

// fork + exec "/proc/self/exe serve" in a new session, so it outlives this command and
// Ctrl+C in the terminal does not reach it. It listens on loopback only, on `where`'s port:
// OLLAMA_HOST=0.0.0.0 (meant for a server started by hand, or for clients) must not make a
// command quietly open an unauthenticated server to the network.
Result<pid_t> spawn_server(const std::string& log, const server::HostPort& where) {
  const std::string loopback = server::HostPort{.host = "127.0.0.1", .port = where.port}.to_string();
  const pid_t pid = fork();
  if (pid < 0) return io_error("cannot start a server: fork failed");
  if (pid == 0) {
    setsid();
    const int null_fd = open("/dev/null", O_RDONLY);
    const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (log_fd >= 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
    }
    setenv("PADDOCK_HOST", loopback.c_str(), 1);
    execl("/proc/self/exe", "paddock", "serve", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

}  // namespace

Result<HttpClient> connect_or_start() {
  HttpClient client = HttpClient::from_env();
  const Status alive = client.heartbeat();
  if (alive.is_ok()) return client;
  if (alive.code() != Code::kUnavailable || !is_local(client.where().host) || env_flag("NOAUTOSTART")) {
    return alive;
  }
  const std::string log = log_path();
  PADDOCK_ASSIGN(const pid_t pid, spawn_server(log, client.where()));
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPollInterval);
    int wstatus = 0;
    if (waitpid(pid, &wstatus, WNOHANG) == pid) {
      // Another command may have started one at the same time and won the port.
      if (client.heartbeat().is_ok()) return client;
      return Status(Code::kUnavailable, "the background server exited at start (see " + log + ")");
    }
    if (client.heartbeat().is_ok()) {
      std::fprintf(stderr, "paddock: started a server in the background (pid %d), log: %s\n",
                   static_cast<int>(pid), log.c_str());
      return client;
    }
  }
  return Status(Code::kUnavailable, "started a server in the background (pid " + std::to_string(pid) +
                                        ") but it did not answer at " + client.where().to_string() +
                                        " within " + std::to_string(kStartTimeout.count()) + "s (see " + log +
                                        ")");
}

}  // namespace paddock::cli
