#include "cli/ui/format.h"

#include <gtest/gtest.h>

namespace paddock::cli::ui {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(HumanBytes, DecimalUnitsLikeOllama) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(999), "999 B");
  EXPECT_EQ(human_bytes(1000), "1 KB");
  EXPECT_EQ(human_bytes(1500), "1.5 KB");
  EXPECT_EQ(human_bytes(12'345'678), "12 MB");
  EXPECT_EQ(human_bytes(4'661'224'676), "4.7 GB");
  EXPECT_EQ(human_bytes(2'000'000'000), "2 GB");
  EXPECT_EQ(human_bytes(1'000'000'000'000), "1 TB");
}

TEST(HumanTime, PastFutureAndForever) {
  const int64_t now = 1'700'000'000 * kSec;
  EXPECT_EQ(human_time(now, now), "Less than a second ago");
  EXPECT_EQ(human_time(now - 1 * kSec, now), "1 second ago");
  EXPECT_EQ(human_time(now - 30 * kSec, now), "30 seconds ago");
  EXPECT_EQ(human_time(now - 90 * kSec, now), "About a minute ago");
  EXPECT_EQ(human_time(now - 4 * 60 * kSec, now), "4 minutes ago");
  EXPECT_EQ(human_time(now - 2 * 3600 * kSec, now), "2 hours ago");
  EXPECT_EQ(human_time(now - 3 * 86400 * kSec, now), "3 days ago");
  EXPECT_EQ(human_time(now - 21 * 86400 * kSec, now), "3 weeks ago");
  EXPECT_EQ(human_time(now - 90 * 86400 * kSec, now), "3 months ago");
  EXPECT_EQ(human_time(now + 4 * 60 * kSec + kSec / 2, now), "4 minutes from now");
  EXPECT_EQ(human_time(INT64_MAX, now), "Forever");
}

TEST(GoDuration, MatchesGoTimeDurationString) {
  EXPECT_EQ(go_duration(0), "0s");
  EXPECT_EQ(go_duration(999), "999ns");
  EXPECT_EQ(go_duration(1500), "1.5µs");
  EXPECT_EQ(go_duration(312'500'000), "312.5ms");
  EXPECT_EQ(go_duration(2'000'001'000), "2.000001s");
  EXPECT_EQ(go_duration(3723 * kSec), "1h2m3s");
  EXPECT_EQ(go_duration(-1500), "-1.5µs");
}

TEST(ShortDuration, EtaFormat) {
  EXPECT_EQ(short_duration(12), "12s");
  EXPECT_EQ(short_duration(3599), "59m59s");
  EXPECT_EQ(short_duration(3720), "1h2m");
}

TEST(Rfc3339, ParsesZoneAndFraction) {
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:01.5Z"), kSec + kSec / 2);
  EXPECT_EQ(parse_rfc3339("1970-01-01T02:00:00+02:00"), 0);
  EXPECT_EQ(parse_rfc3339("2024-03-01T00:00:00Z"), int64_t{1'709'251'200} * kSec);
  EXPECT_EQ(parse_rfc3339("2318-01-01T00:00:00Z").value_or(0) > 0, true);
  EXPECT_FALSE(parse_rfc3339("yesterday").has_value());
  EXPECT_FALSE(parse_rfc3339("2024-03-01T00:00:00").has_value());
  EXPECT_FALSE(parse_rfc3339("2024-13-01T00:00:00Z").has_value());
}

TEST(Processor, OllamaColumn) {
  EXPECT_EQ(processor_text(100, 0), "100% CPU");
  EXPECT_EQ(processor_text(100, 100), "100% GPU");
  EXPECT_EQ(processor_text(100, 52), "48%/52% CPU/GPU");
  EXPECT_EQ(processor_text(100, 200), "Unknown");
}

TEST(Metrics, SummaryLines) {
  const nlohmann::json chunk = {
      {"total_duration", 2'500'000'000},     {"load_duration", 1'000'000}, {"prompt_eval_count", 10},
      {"prompt_eval_duration", 500'000'000}, {"eval_count", 20},           {"eval_duration", 1'000'000'000}};
  EXPECT_EQ(metrics_summary(chunk),
            "total duration:       2.5s\n"
            "load duration:        1ms\n"
            "prompt eval count:    10 token(s)\n"
            "prompt eval duration: 500ms\n"
            "prompt eval rate:     20.00 tokens/s\n"
            "eval count:           20 token(s)\n"
            "eval duration:        1s\n"
            "eval rate:            20.00 tokens/s\n");
  EXPECT_EQ(metrics_summary(nlohmann::json::object()), "");
}

TEST(Table, PadsColumnsByDisplayWidth) {
  EXPECT_EQ(format_table({{"NAME", "ID"}, {"stories:latest", "ab"}, {"é", "abcdef"}}),
            "NAME              ID        \n"
            "stories:latest    ab        \n"
            "é                 abcdef    \n");
}

}  // namespace
}  // namespace paddock::cli::ui
