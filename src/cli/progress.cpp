#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/ui/progress.h"

namespace paddock::cli {

namespace {
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr auto kSpinnerInterval = std::chrono::milliseconds(100);
}  // namespace

int terminal_width(int fd) {
  winsize ws{};
  if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

ProgressPrinter::ProgressPrinter(FILE* out) : out_(out), tty_(isatty(fileno(out)) != 0) {}

void ProgressPrinter::update(const nlohmann::json& o) {
  if (!o.is_object()) return;
  const std::string status = o.value("status", "");
  const std::string digest = o.value("digest", "");
  const bool is_bar = !digest.empty() && o.contains("total");
  const std::string key = is_bar ? digest : status;
  if (key.empty()) return;
  Line* line = nullptr;
  for (Line& l : lines_) {
    if (l.key == key) line = &l;
  }
  const bool fresh = line == nullptr;
  if (fresh) {
    // A new status line means the previous non-bar status is finished.
    for (Line& l : lines_) l.done = l.done || !l.is_bar;
    lines_.push_back(Line{key, status, 0, 0, 0, std::chrono::steady_clock::now(), is_bar, false, false});
    line = &lines_.back();
  }
  if (is_bar) {
    line->message = status;
    line->total = o.value("total", int64_t{0});
    line->completed = o.value("completed", int64_t{0});
    if (fresh) line->first_completed = line->completed;
    line->done = line->total > 0 && line->completed >= line->total;
  }
  redraw(fresh || line->done);
}

void ProgressPrinter::finish() {
  for (Line& l : lines_) l.done = true;
  redraw(true);
}

std::string ProgressPrinter::render(const Line& l, size_t message_width) const {
  if (!l.is_bar) return l.message;
  ui::BarState bar;
  bar.message = l.message;
  bar.message_width = message_width;
  bar.total = l.total;
  bar.completed = l.completed;
  bar.done = l.done;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - l.first_seen).count();
  if (seconds > 0.5) bar.bytes_per_second = static_cast<double>(l.completed - l.first_completed) / seconds;
  return ui::format_bar(bar, std::min(terminal_width(fileno(out_)), 120));
}

void ProgressPrinter::redraw(bool force) {
  size_t message_width = 0;
  for (const Line& l : lines_) {
    if (l.is_bar) message_width = std::max(message_width, l.message.size());
  }
  if (!tty_) {
    for (Line& l : lines_) {
      if (drawn_ < static_cast<size_t>(&l - lines_.data()) + 1) {
        std::fprintf(out_, "%s\n", render(l, message_width).c_str());
        drawn_ = static_cast<size_t>(&l - lines_.data()) + 1;
        l.printed_done = l.done;
      } else if (l.done && !l.printed_done && l.is_bar) {
        std::fprintf(out_, "%s\n", render(l, message_width).c_str());
        l.printed_done = true;
      }
    }
    std::fflush(out_);
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  std::string frame;
  if (drawn_ > 0) frame += "\x1b[" + std::to_string(drawn_) + "A";
  for (const Line& l : lines_) frame += "\r\x1b[K" + render(l, message_width) + "\n";
  drawn_ = lines_.size();
  std::fputs(frame.c_str(), out_);
  std::fflush(out_);
}

Spinner::Spinner(FILE* out) : out_(out) {
  if (!isatty(fileno(out))) return;
  running_ = true;
  thread_ = std::thread([this] {
    for (uint64_t i = 0; running_; ++i) {
      std::fprintf(out_, "\r%.*s ", static_cast<int>(ui::spinner_frame(i).size()),
                   ui::spinner_frame(i).data());
      std::fflush(out_);
      std::this_thread::sleep_for(kSpinnerInterval);
    }
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
  });
}

Spinner::~Spinner() { stop(); }

void Spinner::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

}  // namespace paddock::cli
