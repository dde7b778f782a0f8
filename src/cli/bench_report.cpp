#include "cli/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string_view>

#include <nlohmann/json.hpp>

namespace paddock::cli {

namespace {

std::string printf_string(const char* fmt, double a, double b = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

std::string human_size(uint64_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  return mib >= 1024.0 ? printf_string("%.2f GiB", mib / 1024.0) : printf_string("%.2f MiB", mib);
}

std::string human_params(uint64_t n) {
  const double d = static_cast<double>(n);
  if (d >= 1e9) return printf_string("%.2f B", d / 1e9);
  if (d >= 1e6) return printf_string("%.2f M", d / 1e6);
  return printf_string("%.2f K", d / 1e3);
}

}  // namespace

Stat mean_sd(std::span<const double> samples) {
  Stat s;
  if (samples.empty()) return s;
  for (double v : samples) s.mean += v;
  s.mean /= static_cast<double>(samples.size());
  if (samples.size() > 1) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(sq / static_cast<double>(samples.size() - 1));
  }
  return s;
}

double BenchReport::decode_efficiency() const {
  if (bandwidth_gbs <= 0) return 0;
  return tg_tps.mean * static_cast<double>(bytes_per_token) / (bandwidth_gbs * 1e9);
}

uint64_t weight_bytes_per_token(const gguf::File& file) {
  const bool tied = file.find_tensor("output.weight") == nullptr;
  // A mixture of experts reads only the chosen experts' matrices of each stack.
  uint64_t n_expert = 0;
  uint64_t n_used = 0;
  if (const std::optional<std::string_view> arch = file.get_string("general.architecture")) {
    const std::string a(*arch);
    n_expert = static_cast<uint64_t>(file.get_int(a + ".expert_count").value_or(0));
    n_used = static_cast<uint64_t>(file.get_int(a + ".expert_used_count").value_or(0));
  }
  uint64_t bytes = 0;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (t.ne.size() < 2) continue;
    if (t.name == "token_embd.weight" && !tied) continue;
    const bool experts = t.ne.size() == 3 && n_expert > 0 && static_cast<uint64_t>(t.ne[2]) == n_expert;
    bytes += experts ? t.n_bytes / n_expert * std::min(n_used, n_expert) : t.n_bytes;
  }
  return bytes;
}

uint64_t total_tensor_bytes(const gguf::File& file) {
  uint64_t bytes = 0;
  for (const gguf::TensorInfo& t : file.tensors()) bytes += t.n_bytes;
  return bytes;
}

uint64_t total_params(const gguf::File& file) {
  uint64_t n = 0;
  for (const gguf::TensorInfo& t : file.tensors()) n += t.n_elements;
  return n;
}

std::optional<uint64_t> peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  constexpr std::string_view kKey = "VmHWM:";
  while (std::getline(in, line)) {
    if (!line.starts_with(kKey)) continue;
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str() + kKey.size(), "%llu", &kib) != 1) return std::nullopt;
    return static_cast<uint64_t>(kib) * 1024;
  }
  return std::nullopt;
}

bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

std::string format_text(const BenchReport& r) {
  const std::string model = r.arch + " " + r.model + " " + r.type;
  const std::string size = human_size(r.size_bytes);
  const std::string params = human_params(r.n_params);
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "| %-40s | %12s | %10s | %-10s | %7s | %13s | %20s |\n", "model", "size",
                "params", "backend", "threads", "test", "t/s");
  out += buf;
  out += "| " + std::string(40, '-') +
         " | -----------: | ---------: | ---------- | ------: | ------------: | "
         "-------------------: |\n";
  auto row = [&](const std::string& test, const Stat& s) {
    const std::string tps = printf_string("%.2f ± %.2f", s.mean, s.sd);
    std::snprintf(buf, sizeof buf, "| %-40s | %12s | %10s | %-10s | %7d | %13s | %21s |\n", model.c_str(),
                  size.c_str(), params.c_str(), r.backend.c_str(), r.threads, test.c_str(), tps.c_str());
    out += buf;
  };
  if (r.n_prompt > 0) row("pp" + std::to_string(r.n_prompt), r.pp_tps);
  if (r.n_gen > 0) row("tg" + std::to_string(r.n_gen), r.tg_tps);
  if (r.encoder) {
    out += printf_string("\nembeddings: %.2f sequences/s of %.0f tokens (one input per pass)\n",
                         r.pp_tps.mean / r.n_prompt, r.n_prompt);
  }
  const std::string efficiency =
      r.n_gen > 0 ? printf_string("%.3f", r.decode_efficiency()) : "n/a (no tg test)";
  char bandwidth[256];
  if (r.bandwidth_device.empty()) {
    std::snprintf(bandwidth, sizeof bandwidth, "read bandwidth: %.2f GB/s (%d threads)", r.bandwidth_gbs, r.threads);
  } else {
    std::snprintf(bandwidth, sizeof bandwidth, "copy bandwidth: %.2f GB/s (%s)", r.bandwidth_gbs,
                  r.bandwidth_device.c_str());
  }
  std::snprintf(buf, sizeof buf, "\n%s; bytes read per token: %.1f MB; decode efficiency: %s\npeak RSS: %s\n",
                bandwidth, static_cast<double>(r.bytes_per_token) / 1e6, efficiency.c_str(),
                human_size(r.peak_rss_bytes).c_str());
  out += buf;
  return out;
}

std::string format_json(const BenchReport& r) {
  nlohmann::ordered_json j;
  j["model"] = r.model;
  j["type"] = r.type;
  j["size_bytes"] = r.size_bytes;
  j["threads"] = r.threads;
  if (r.n_prompt > 0) j["pp" + std::to_string(r.n_prompt) + "_tps"] = {r.pp_tps.mean, r.pp_tps.sd};
  if (r.n_gen > 0) j["tg" + std::to_string(r.n_gen) + "_tps"] = {r.tg_tps.mean, r.tg_tps.sd};
  if (r.encoder) j["embed" + std::to_string(r.n_prompt) + "_seqs_per_s"] = r.pp_tps.mean / r.n_prompt;
  j["bandwidth_gbs"] = r.bandwidth_gbs;
  if (!r.bandwidth_device.empty()) j["bandwidth_device"] = r.bandwidth_device;
  j["decode_efficiency"] = r.n_gen > 0 ? nlohmann::ordered_json(r.decode_efficiency()) : nullptr;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  return j.dump() + "\n";
}

}  // namespace paddock::cli
