#include "server/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

namespace paddock::server {
namespace {

TEST(Metrics, RendersHelpTypeAndSamplesInLabelOrder) {
  Metrics m;
  Counter& c = m.counter("paddock_things_total", "Things done.", {"model", "kind"});
  Gauge& g = m.gauge("paddock_depth", "How deep.");
  c.inc({"b", "x"}, 2);
  c.inc({"a", "y"});
  g.set({}, 1.5);
  EXPECT_EQ(m.render(),
            "# HELP paddock_things_total Things done.\n"
            "# TYPE paddock_things_total counter\n"
            "paddock_things_total{model=\"a\",kind=\"y\"} 1\n"
            "paddock_things_total{model=\"b\",kind=\"x\"} 2\n"
            "# HELP paddock_depth How deep.\n"
            "# TYPE paddock_depth gauge\n"
            "paddock_depth 1.5\n");
}

TEST(Metrics, UnlabelledFamiliesStartAtZeroAndLabelledOnesEmpty) {
  Metrics m;
  m.counter("paddock_a_total", "A.");
  m.counter("paddock_b_total", "B.", {"model"});
  EXPECT_EQ(m.render(),
            "# HELP paddock_a_total A.\n# TYPE paddock_a_total counter\npaddock_a_total 0\n"
            "# HELP paddock_b_total B.\n# TYPE paddock_b_total counter\n");
}

TEST(Metrics, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(escape_label_value("plain:latest"), "plain:latest");
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  Metrics m;
  Counter& c = m.counter("paddock_x_total", "Line one\nback\\slash \"quoted\".", {"model"});
  c.inc({"we\"ird\\na\nme"});
  EXPECT_EQ(m.render(),
            "# HELP paddock_x_total Line one\\nback\\\\slash \"quoted\".\n"
            "# TYPE paddock_x_total counter\n"
            "paddock_x_total{model=\"we\\\"ird\\\\na\\nme\"} 1\n");
}

TEST(Metrics, FormatsValues) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(3), "3");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(1234567890123.0), "1234567890123");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(Metrics, ValidatesNames) {
  EXPECT_TRUE(valid_metric_name("paddock_http_requests_total"));
  EXPECT_TRUE(valid_metric_name("ns:sub_metric"));
  EXPECT_FALSE(valid_metric_name("9lives"));
  EXPECT_FALSE(valid_metric_name("has-dash"));
  EXPECT_FALSE(valid_metric_name(""));
  EXPECT_TRUE(valid_label_name("route"));
  EXPECT_FALSE(valid_label_name("with:colon"));
  EXPECT_FALSE(valid_label_name("__reserved"));
  EXPECT_FALSE(valid_label_name("0x"));
}

TEST(Metrics, HistogramBucketsAreCumulativeAndEndInInf) {
  Metrics m;
  Histogram& h = m.histogram("paddock_wait_seconds", "Waits.", {"route"}, {1, 2, 5});
  for (const double v : {0.5, 1.0, 3.0, 10.0}) h.observe({"/r"}, v);  // 1.0 falls in le="1"
  EXPECT_EQ(h.count({"/r"}), 4u);
  EXPECT_EQ(m.render(),
            "# HELP paddock_wait_seconds Waits.\n"
            "# TYPE paddock_wait_seconds histogram\n"
            "paddock_wait_seconds_bucket{route=\"/r\",le=\"1\"} 2\n"
            "paddock_wait_seconds_bucket{route=\"/r\",le=\"2\"} 2\n"
            "paddock_wait_seconds_bucket{route=\"/r\",le=\"5\"} 3\n"
            "paddock_wait_seconds_bucket{route=\"/r\",le=\"+Inf\"} 4\n"
            "paddock_wait_seconds_sum{route=\"/r\"} 14.5\n"
            "paddock_wait_seconds_count{route=\"/r\"} 4\n");
}

TEST(Metrics, GaugeReplaceDropsSamplesThatAreGone) {
  Metrics m;
  Gauge& g = m.gauge("paddock_up", "Up.", {"model"});
  g.set({"old"}, 1);
  g.replace({{{"new"}, 1}});
  EXPECT_EQ(g.value({"old"}), 0);
  EXPECT_EQ(m.render(), "# HELP paddock_up Up.\n# TYPE paddock_up gauge\npaddock_up{model=\"new\"} 1\n");
}

TEST(Metrics, ConcurrentUpdatesAreAllCounted) {
  Metrics m;
  Counter& c = m.counter("paddock_n_total", "N.", {"model"});
  Histogram& h = m.histogram("paddock_h", "H.", {"model"}, {0.5});
  constexpr int kThreads = 8, kEach = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string model = t % 2 ? "odd" : "even";
      for (int i = 0; i < kEach; ++i) {
        c.inc({model});
        h.observe({model}, 1);
        if (i % 1000 == 0) m.render();  // scrapes while counting
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(c.value({"odd"}) + c.value({"even"}), double(kThreads) * kEach);
  EXPECT_EQ(h.count({"odd"}) + h.count({"even"}), uint64_t(kThreads) * kEach);
}

TEST(ServerMetrics, CountsAGenerationsTokensRateAndTruncation) {
  ServerMetrics m;
  runner::CompletionChunk final;
  final.prompt_eval_count = 7;
  final.eval_count = 4;
  final.eval_duration_ns = 2'000'000'000;  // 2 tokens/s
  m.generation_done("stories:latest", final);
  final.truncated_tokens = 3;
  m.generation_done("stories:latest", final);
  const std::string text = m.render();
  EXPECT_NE(text.find("paddock_prompt_tokens_total{model=\"stories:latest\"} 14\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("paddock_generated_tokens_total{model=\"stories:latest\"} 8\n"), std::string::npos);
  EXPECT_NE(text.find("paddock_generation_tokens_per_second_bucket{model=\"stories:latest\",le=\"1\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("paddock_generation_tokens_per_second_bucket{model=\"stories:latest\",le=\"2\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("paddock_prompt_truncations_total{model=\"stories:latest\"} 1\n"), std::string::npos);
}

TEST(ServerMetrics, SchedulerStateReplacesLoadedModels) {
  ServerMetrics m;
  m.set_scheduler_state({{"a:latest", 100}, {"b:latest", 200}}, 3);
  m.set_scheduler_state({{"b:latest", 250}}, 0);
  const std::string text = m.render();
  EXPECT_EQ(text.find("model=\"a:latest\""), std::string::npos) << text;
  EXPECT_NE(text.find("paddock_model_loaded{model=\"b:latest\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("paddock_model_memory_bytes{model=\"b:latest\"} 250\n"), std::string::npos);
  EXPECT_NE(text.find("paddock_scheduler_queue_depth 0\n"), std::string::npos);
}

}  // namespace
}  // namespace paddock::server
