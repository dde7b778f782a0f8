#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/check.h"

namespace paddock::server {

namespace {

bool name_char(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

bool valid_name(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, colon)) return false;
  }
  return true;
}

// HELP text escapes only backslash and newline.
std::string escape_help(std::string_view v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string escape_label_value(std::string_view v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  PADDOCK_CHECK(ec == std::errc());
  return std::string(buf, end);
}

bool valid_metric_name(std::string_view name) { return valid_name(name, true); }
bool valid_label_name(std::string_view name) { return valid_name(name, false) && !name.starts_with("__"); }

Family::Family(std::string name, std::string help, std::string type, std::vector<std::string> labels)
    : name_(std::move(name)), help_(std::move(help)), type_(std::move(type)), labels_(std::move(labels)) {
  PADDOCK_CHECK(valid_metric_name(name_));
  for (const std::string& l : labels_) PADDOCK_CHECK(valid_label_name(l) && l != "le");
}

void Family::render(std::string* out) const {
  *out += "# HELP " + name_ + " " + escape_help(help_) + "\n";
  *out += "# TYPE " + name_ + " " + type_ + "\n";
  std::lock_guard lk(mu_);
  render_samples(out);
}

void Family::sample_line(std::string* out, std::string_view suffix, const LabelValues& values,
                         std::string_view extra_label, double value) const {
  *out += name_;
  *out += suffix;
  std::string labels;
  for (size_t i = 0; i < labels_.size(); ++i) {
    if (!labels.empty()) labels += ',';
    labels += labels_[i] + "=\"" + escape_label_value(values[i]) + "\"";
  }
  if (!extra_label.empty()) {
    if (!labels.empty()) labels += ',';
    labels += extra_label;
  }
  if (!labels.empty()) *out += "{" + labels + "}";
  *out += " " + format_value(value) + "\n";
}

void Family::check_arity(const LabelValues& values) const { PADDOCK_CHECK(values.size() == labels_.size()); }

Counter::Counter(std::string name, std::string help, std::vector<std::string> labels)
    : Family(std::move(name), std::move(help), "counter", std::move(labels)) {
  if (labels_.empty()) values_[{}] = 0;  // an unlabelled counter is 0 before its first event
}

void Counter::inc(const LabelValues& values, double by) {
  check_arity(values);
  PADDOCK_CHECK(by >= 0);
  std::lock_guard lk(mu_);
  values_[values] += by;
}

double Counter::value(const LabelValues& values) const {
  std::lock_guard lk(mu_);
  const auto it = values_.find(values);
  return it == values_.end() ? 0 : it->second;
}

void Counter::render_samples(std::string* out) const {
  for (const auto& [labels, v] : values_) sample_line(out, "", labels, "", v);
}

Gauge::Gauge(std::string name, std::string help, std::vector<std::string> labels)
    : Family(std::move(name), std::move(help), "gauge", std::move(labels)) {
  if (labels_.empty()) values_[{}] = 0;
}

void Gauge::set(const LabelValues& values, double v) {
  check_arity(values);
  std::lock_guard lk(mu_);
  values_[values] = v;
}

void Gauge::replace(std::map<LabelValues, double> samples) {
  for (const auto& [labels, v] : samples) check_arity(labels);
  std::lock_guard lk(mu_);
  values_ = std::move(samples);
}

double Gauge::value(const LabelValues& values) const {
  std::lock_guard lk(mu_);
  const auto it = values_.find(values);
  return it == values_.end() ? 0 : it->second;
}

void Gauge::render_samples(std::string* out) const {
  for (const auto& [labels, v] : values_) sample_line(out, "", labels, "", v);
}

Histogram::Histogram(std::string name, std::string help, std::vector<std::string> labels,
                     std::vector<double> bounds)
    : Family(std::move(name), std::move(help), "histogram", std::move(labels)), bounds_(std::move(bounds)) {
  PADDOCK_CHECK(!bounds_.empty() && std::is_sorted(bounds_.begin(), bounds_.end()) &&
                std::adjacent_find(bounds_.begin(), bounds_.end()) == bounds_.end() &&
                std::isfinite(bounds_.back()));
}

void Histogram::observe(const LabelValues& values, double v) {
  check_arity(values);
  // The first bucket whose bound is >= v (le is inclusive); NaN and +Inf land in +Inf.
  const size_t bucket = std::isnan(v)
                            ? bounds_.size()
                            : size_t(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  std::lock_guard lk(mu_);
  Series& s = series_[values];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
  ++s.buckets[bucket];
  s.sum += v;
  ++s.count;
}

uint64_t Histogram::count(const LabelValues& values) const {
  std::lock_guard lk(mu_);
  const auto it = series_.find(values);
  return it == series_.end() ? 0 : it->second.count;
}

void Histogram::render_samples(std::string* out) const {
  for (const auto& [labels, s] : series_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      const std::string le = i < bounds_.size() ? format_value(bounds_[i]) : "+Inf";
      sample_line(out, "_bucket", labels, "le=\"" + le + "\"", double(cumulative));
    }
    sample_line(out, "_sum", labels, "", s.sum);
    sample_line(out, "_count", labels, "", double(s.count));
  }
}

template <typename F>
F& Metrics::add(std::unique_ptr<F> family) {
  F& f = *family;
  std::lock_guard lk(mu_);
  families_.push_back(std::move(family));
  return f;
}

Counter& Metrics::counter(std::string name, std::string help, std::vector<std::string> labels) {
  return add(std::make_unique<Counter>(std::move(name), std::move(help), std::move(labels)));
}

Gauge& Metrics::gauge(std::string name, std::string help, std::vector<std::string> labels) {
  return add(std::make_unique<Gauge>(std::move(name), std::move(help), std::move(labels)));
}

Histogram& Metrics::histogram(std::string name, std::string help, std::vector<std::string> labels,
                              std::vector<double> bounds) {
  return add(
      std::make_unique<Histogram>(std::move(name), std::move(help), std::move(labels), std::move(bounds)));
}

std::string Metrics::render() const {
  std::lock_guard lk(mu_);
  std::string out;
  for (const auto& f : families_) f->render(&out);
  return out;
}

ServerMetrics::ServerMetrics()
    : requests_(metrics_.counter("paddock_http_requests_total",
                                 "HTTP requests answered, by route pattern and status.",
                                 {"route", "status"})),
      request_seconds_(metrics_.histogram(
          "paddock_http_request_duration_seconds",
          "Time from a request's arrival to the end of its response (streamed ones included), by route "
          "pattern.",
          {"route"}, {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300})),
      prompt_tokens_(metrics_.counter(
          "paddock_prompt_tokens_total",
          "Prompt tokens of completed generations (the whole prompt, cached part included).", {"model"})),
      generated_tokens_(metrics_.counter("paddock_generated_tokens_total",
                                         "Tokens generated by completed generations.", {"model"})),
      tokens_per_second_(
          metrics_.histogram("paddock_generation_tokens_per_second",
                             "Generation rate of completed generations (eval_count / eval_duration).",
                             {"model"}, {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000})),
      first_token_seconds_(metrics_.histogram(
          "paddock_time_to_first_token_seconds",
          "Time from a generating request's arrival to its first output (queueing and model load included).",
          {"model"}, {0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120})),
      queue_depth_(metrics_.gauge("paddock_scheduler_queue_depth",
                                  "Requests in the scheduler waiting for a model slot or a model load.")),
      loaded_(metrics_.gauge("paddock_model_loaded", "1 for each model loaded now.", {"model"})),
      memory_bytes_(metrics_.gauge("paddock_model_memory_bytes",
                                   "Memory held by each loaded model, in bytes.", {"model"})),
      loads_(metrics_.counter("paddock_model_loads_total", "Models loaded (runners started) successfully.",
                              {"model"})),
      evictions_(metrics_.counter("paddock_model_evictions_total",
                                  "Models unloaded to make room for another one (count or memory limit).",
                                  {"model"})),
      crashes_(metrics_.counter("paddock_runner_crashes_total",
                                "Runners found dead (crashed or hung) by the scheduler's health check.",
                                {"model"})),
      truncations_(metrics_.counter("paddock_prompt_truncations_total",
                                    "Prompts cut to fit the model's context.", {"model"})) {}

void ServerMetrics::request_done(std::string_view route, int status, double seconds) {
  requests_.inc({std::string(route), std::to_string(status)});
  request_seconds_.observe({std::string(route)}, seconds);
}

void ServerMetrics::first_token(const std::string& model, double seconds) {
  first_token_seconds_.observe({model}, seconds);
}

void ServerMetrics::generation_done(const std::string& model, const runner::CompletionChunk& final) {
  prompt_tokens_.inc({model}, double(std::max<int64_t>(final.prompt_eval_count, 0)));
  generated_tokens_.inc({model}, double(std::max<int64_t>(final.eval_count, 0)));
  if (final.eval_count > 0 && final.eval_duration_ns > 0) {
    tokens_per_second_.observe({model}, double(final.eval_count) * 1e9 / double(final.eval_duration_ns));
  }
  if (final.truncated_tokens > 0) prompt_truncated(model);
}

void ServerMetrics::model_loaded(const std::string& model) { loads_.inc({model}); }
void ServerMetrics::model_evicted(const std::string& model) { evictions_.inc({model}); }
void ServerMetrics::runner_crashed(const std::string& model) { crashes_.inc({model}); }
void ServerMetrics::prompt_truncated(const std::string& model) { truncations_.inc({model}); }

void ServerMetrics::set_scheduler_state(const std::vector<LoadedModelSample>& loaded, size_t queue_depth) {
  std::map<LabelValues, double> up, bytes;
  for (const LoadedModelSample& m : loaded) {
    up[{m.name}] = 1;
    bytes[{m.name}] += double(m.memory_bytes);  // one name on two files (rare) adds up
  }
  loaded_.replace(std::move(up));
  memory_bytes_.replace(std::move(bytes));
  queue_depth_.set({}, double(queue_depth));
}

}  // namespace paddock::server
