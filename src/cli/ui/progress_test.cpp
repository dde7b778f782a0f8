#include "cli/ui/progress.h"

#include <gtest/gtest.h>

#include "cli/ui/wordwrap.h"

namespace paddock::cli::ui {
namespace {

TEST(ProgressBar, DoneLineLikeOllama) {
  const std::string line = format_bar(
      {.message = "pulling 8eeb52dfb3bb", .total = 4'661'224'676, .completed = 4'661'224'676, .done = true},
      80);
  EXPECT_EQ(display_width(line), 80u);
  EXPECT_TRUE(line.starts_with("pulling 8eeb52dfb3bb: 100% ▕████")) << line;
  EXPECT_TRUE(line.ends_with("▏ 4.7 GB")) << line;
}

TEST(ProgressBar, RunningShowsSizesRateAndEta) {
  const std::string line = format_bar({.message = "pulling abc",
                                       .total = 2'000'000'000,
                                       .completed = 1'000'000'000,
                                       .bytes_per_second = 10e6},
                                      100);
  EXPECT_EQ(display_width(line), 100u);
  EXPECT_NE(line.find(" 50% ▕"), std::string::npos) << line;
  EXPECT_NE(line.find("1 GB/2 GB"), std::string::npos) << line;
  EXPECT_NE(line.find("10 MB/s"), std::string::npos) << line;
  EXPECT_NE(line.find("1m40s"), std::string::npos) << line;
  // Half the bar is filled.
  const size_t open = line.find("▕"), close = line.find("▏");
  const std::string inside = line.substr(open + 3, close - open - 3);
  const size_t cells = display_width(inside);
  size_t filled = 0;
  for (size_t i = inside.find("█"); i != std::string::npos; i = inside.find("█", i + 1)) ++filled;
  EXPECT_EQ(filled, cells / 2);
}

TEST(ProgressBar, AlignsMessagesAndSurvivesNarrowTerminals) {
  const std::string a =
      format_bar({.message = "pulling a", .message_width = 12, .total = 10, .completed = 0}, 60);
  const std::string b =
      format_bar({.message = "pulling abcd", .message_width = 12, .total = 10, .completed = 0}, 60);
  EXPECT_EQ(a.find('%'), b.find('%'));
  EXPECT_FALSE(format_bar({.message = "x", .total = 0, .completed = 0}, 5).empty());
}

TEST(Spinner, CyclesThroughFrames) {
  EXPECT_EQ(spinner_frame(0), "⠋");
  EXPECT_EQ(spinner_frame(10), spinner_frame(0));
  EXPECT_NE(spinner_frame(1), spinner_frame(0));
}

}  // namespace
}  // namespace paddock::cli::ui
