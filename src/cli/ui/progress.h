// Text of the progress lines `pull`, `push` and `create` print, as Ollama's progress.Bar
// renders them: "pulling 8eeb52dfb3bb:  42% ▕██████          ▏ 2.0 GB/4.7 GB   12 MB/s   3m40s"
// while running, and "pulling 8eeb52dfb3bb: 100% ▕████████████████▏ 4.7 GB" when done; plus
// the spinner frames shown while a model loads. Pure formatting: the caller owns the clock.
//   std::string line = format_bar({.message = "pulling abc", .total = n, .completed = m}, 80);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace paddock::cli::ui {

struct BarState {
  std::string message;       // "pulling 8eeb52dfb3bb"
  size_t message_width = 0;  // pad the message to this many columns (aligns several bars)
  int64_t total = 0;
  int64_t completed = 0;
  double bytes_per_second = 0;  // 0 = unknown (no rate or ETA shown)
  bool done = false;
};

// One line of `width` terminal columns (at least the text itself when width is small).
std::string format_bar(const BarState& bar, int width);
// Spinner frame i (any i; wraps around).
std::string_view spinner_frame(uint64_t i);

}  // namespace paddock::cli::ui
