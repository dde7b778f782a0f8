// Metrics for GET /metrics: a small thread-safe registry of counters, gauges and histograms
// with labels, rendered in Prometheus' text exposition format 0.0.4, and ServerMetrics, the
// set paddock exports (requests, tokens, timings, the scheduler's models and queue).
// Invariants: metric and label names are valid exposition names (CHECKed when declared); a
// family's samples are rendered in label order, so a scrape is stable; label values are
// escaped (backslash, double quote, newline); histogram buckets render cumulatively and end
// with le="+Inf", whose count equals _count.
//   Metrics m;
//   Counter& c = m.counter("paddock_things_total", "Things done.", {"model"});
//   c.inc({"stories:latest"});
//   std::string text = m.render();
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/runner.h"

namespace paddock::server {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

using LabelValues = std::vector<std::string>;  // in the order of the family's label names

// One metric family: name, help, type and label names; samples keyed by label values.
class Family {
 public:
  Family(std::string name, std::string help, std::string type, std::vector<std::string> labels);
  virtual ~Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;
  // The # HELP and # TYPE lines, then every sample.
  void render(std::string* out) const;

 protected:
  // `name{labels,extra} value` with the family's labels set to `values`.
  void sample_line(std::string* out, std::string_view suffix, const LabelValues& values,
                   std::string_view extra_label, double value) const;
  void check_arity(const LabelValues& values) const;
  virtual void render_samples(std::string* out) const = 0;

  const std::string name_, help_, type_;
  const std::vector<std::string> labels_;
  mutable std::mutex mu_;
};

class Counter final : public Family {
 public:
  Counter(std::string name, std::string help, std::vector<std::string> labels);
  // `by` must not be negative: a counter only goes up.
  void inc(const LabelValues& values = {}, double by = 1);
  double value(const LabelValues& values = {}) const;

 private:
  void render_samples(std::string* out) const override;
  std::map<LabelValues, double> values_;
};

class Gauge final : public Family {
 public:
  Gauge(std::string name, std::string help, std::vector<std::string> labels);
  void set(const LabelValues& values, double v);
  // Replaces every sample at once (state read from elsewhere at scrape time: what is gone goes).
  void replace(std::map<LabelValues, double> samples);
  double value(const LabelValues& values = {}) const;

 private:
  void render_samples(std::string* out) const override;
  std::map<LabelValues, double> values_;
};

class Histogram final : public Family {
 public:
  // `bounds`: the buckets' upper bounds, strictly increasing; +Inf is implied.
  Histogram(std::string name, std::string help, std::vector<std::string> labels, std::vector<double> bounds);
  void observe(const LabelValues& values, double v);
  uint64_t count(const LabelValues& values) const;

 private:
  struct Series {
    std::vector<uint64_t> buckets;  // per bound, not cumulative; the last one is +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  void render_samples(std::string* out) const override;
  const std::vector<double> bounds_;
  std::map<LabelValues, Series> series_;
};

// The families, in the order they are declared and rendered.
class Metrics {
 public:
  Counter& counter(std::string name, std::string help, std::vector<std::string> labels = {});
  Gauge& gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  Histogram& histogram(std::string name, std::string help, std::vector<std::string> labels,
                       std::vector<double> bounds);
  std::string render() const;

 private:
  template <typename F>
  F& add(std::unique_ptr<F> family);
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Family>> families_;
};

// Exposition-format helpers (exposed for the tests).
std::string escape_label_value(std::string_view v);
std::string format_value(double v);  // shortest round-trip form; +Inf, -Inf, NaN
bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);

// A loaded model as /metrics reports it.
struct LoadedModelSample {
  std::string name;
  uint64_t memory_bytes = 0;
};

// paddock's metrics (docs/api.md lists them). Model labels are the scheduler's display names
// ("stories:latest"), route labels the route table's patterns: both sets are bounded.
class ServerMetrics {
 public:
  ServerMetrics();

  void request_done(std::string_view route, int status, double seconds);
  // The first output of a generation, `seconds` after its request arrived.
  void first_token(const std::string& model, double seconds);
  // A generation's last chunk: its token counts, rate and truncation.
  void generation_done(const std::string& model, const runner::CompletionChunk& final);
  void model_loaded(const std::string& model);
  void model_evicted(const std::string& model);
  void runner_crashed(const std::string& model);
  // A prompt cut to fit the context.
  void prompt_truncated(const std::string& model);
  // The scheduler's state, read at scrape time.
  void set_scheduler_state(const std::vector<LoadedModelSample>& loaded, size_t queue_depth);

  std::string render() const { return metrics_.render(); }

 private:
  Metrics metrics_;
  Counter& requests_;
  Histogram& request_seconds_;
  Counter& prompt_tokens_;
  Counter& generated_tokens_;
  Histogram& tokens_per_second_;
  Histogram& first_token_seconds_;
  Gauge& queue_depth_;
  Gauge& loaded_;
  Gauge& memory_bytes_;
  Counter& loads_;
  Counter& evictions_;
  Counter& crashes_;
  Counter& truncations_;
};

}  // namespace paddock::server
