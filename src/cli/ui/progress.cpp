#include "cli/ui/progress.h"

#include <array>
#include <cmath>
#include <cstdio>

#include "cli/ui/format.h"
#include "cli/ui/wordwrap.h"

namespace paddock::cli::ui {

namespace {

std::string pad_left(const std::string& s, size_t n) {
  const size_t w = display_width(s);
  return w >= n ? s : std::string(n - w, ' ') + s;
}

std::string pad_right(const std::string& s, size_t n) {
  const size_t w = display_width(s);
  return w >= n ? s : s + std::string(n - w, ' ');
}

}  // namespace

std::string format_bar(const BarState& bar, int width) {
  double percent = 0;
  if (bar.total > 0)
    percent = std::min(100.0, 100.0 * static_cast<double>(bar.completed) / static_cast<double>(bar.total));
  if (bar.done) percent = 100;

  std::string pre;
  if (!bar.message.empty()) pre = pad_right(bar.message + ":", bar.message_width + 1) + " ";
  char pct[16];
  std::snprintf(pct, sizeof pct, "%3.0f%%", std::floor(percent));
  pre += pct;

  std::string suf;
  if (!bar.done) {
    suf += pad_left(human_bytes(bar.completed), 6) + "/" + pad_right(human_bytes(bar.total), 6);
  } else {
    suf += pad_left(human_bytes(bar.total), 6);
  }
  if (!bar.done && bar.bytes_per_second > 0) {
    suf += "  " + pad_left(human_bytes(static_cast<int64_t>(bar.bytes_per_second)), 6) + "/s";
    const double remaining = static_cast<double>(std::max<int64_t>(0, bar.total - bar.completed));
    suf += "  " + pad_left(short_duration(static_cast<int64_t>(remaining / bar.bytes_per_second)), 6);
  }

  // Two bar edges and a space on each side.
  const int fill = std::max(0, width - static_cast<int>(display_width(pre) + display_width(suf)) - 4);
  const int n = static_cast<int>(fill * percent / 100);
  std::string mid = " ▕";
  for (int i = 0; i < n; ++i) mid += "█";
  mid.append(static_cast<size_t>(fill - n), ' ');
  mid += "▏ ";
  return pre + mid + suf;
}

std::string_view spinner_frame(uint64_t i) {
  static constexpr std::array<std::string_view, 10> kFrames = {"⠋", "⠙", "⠹", "⠸", "⠼",
                                                               "⠴", "⠦", "⠧", "⠇", "⠏"};
  return kFrames[i % kFrames.size()];
}

}  // namespace paddock::cli::ui
