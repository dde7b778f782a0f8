// Terminal rendering of the progress streams of pull, push and create ({"status", "digest",
// "total", "completed"} objects): one bar per digest and one line per other status, redrawn
// in place on a terminal; on a pipe each line is printed once when it appears and once when
// its bar completes. Spinner: shown on stderr while a model loads, until stop().
//   ProgressPrinter p(stderr); client.stream("/api/pull", body, [&](auto& o) { p.update(o); return true; });
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace paddock::cli {

// Columns of the terminal behind fd (80 when it is not one).
int terminal_width(int fd);

class ProgressPrinter {
 public:
  explicit ProgressPrinter(FILE* out);
  void update(const nlohmann::json& object);
  // Marks every bar done and leaves the cursor below the last line.
  void finish();

 private:
  struct Line {
    std::string key;  // digest, or the status text
    std::string message;
    int64_t total = 0, completed = 0, first_completed = 0;
    std::chrono::steady_clock::time_point first_seen;
    bool is_bar = false, done = false, printed_done = false;
  };
  void redraw(bool force);
  std::string render(const Line& line, size_t message_width) const;

  FILE* out_;
  bool tty_;
  std::vector<Line> lines_;
  size_t drawn_ = 0;  // lines on screen from the last redraw
  std::chrono::steady_clock::time_point last_draw_;
};

class Spinner {
 public:
  explicit Spinner(FILE* out);
  ~Spinner();
  Spinner(const Spinner&) = delete;
  Spinner& operator=(const Spinner&) = delete;
  void stop();

 private:
  FILE* out_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace paddock::cli
