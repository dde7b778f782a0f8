// What `paddock bench` prints: llama-bench's markdown table (model, size, params, backend,
// threads, test, t/s) plus bandwidth, decode efficiency and peak RSS, or one JSON object.
// Decode efficiency = tg tokens/s x bytes read per token / read bandwidth, where bytes per
// token are those of every weight matrix a decode step streams (see weight_bytes_per_token).
//   BenchReport r{...}; std::fputs(format_text(r).c_str(), stdout);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "gguf/gguf.h"

namespace paddock::cli {

struct Stat {
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1), 0 for one sample
};
Stat mean_sd(std::span<const double> samples);

struct BenchReport {
  std::string model;  // general.name, or the file name
  std::string arch;
  std::string type;  // file type name ("Q4_K_M"), or "unknown"
  uint64_t size_bytes = 0;
  uint64_t n_params = 0;
  uint64_t bytes_per_token = 0;
  std::string backend;  // the backend's name: cpu-avx2, cpu-avx512, ...
  int threads = 0;
  int n_prompt = 0;  // 0: the pp test was skipped (-p 0)
  int n_gen = 0;     // 0: the tg test was skipped (-n 0, or an encoder), and there is no decode efficiency
  bool encoder = false;  // an embedding model: pp is its throughput, one input of n_prompt tokens per pass
  Stat pp_tps;
  Stat tg_tps;
  double bandwidth_gbs = 0;
  // Empty: the host's read bandwidth over `threads` threads; else the GPU whose copy
  // bandwidth it is (-ngl: the offloaded layers read their weights there).
  std::string bandwidth_device;
  uint64_t peak_rss_bytes = 0;

  double decode_efficiency() const;  // 0 without a tg test
};

// Bytes a decode step reads: every tensor of two or more dimensions (the matmul weights and
// the output head) except token_embd, which counts only when it is the head (no output.weight):
// a decode looks up a single row of it otherwise. Norms and other 1-D tensors are left out.
// Stacks of experts count expert_used_count of their expert_count matrices.
uint64_t weight_bytes_per_token(const gguf::File& file);
uint64_t total_tensor_bytes(const gguf::File& file);
uint64_t total_params(const gguf::File& file);

// The process's peak resident set (VmHWM of /proc/self/status); nullopt where unreadable.
std::optional<uint64_t> peak_rss_bytes();
// Restarts the peak at the current resident set (writes 5 to /proc/self/clear_refs), so the
// peak covers only what follows (the synthetic model's build is not the model's footprint).
// False where the kernel does not allow it; the peak then covers the whole process.
bool reset_peak_rss();

std::string format_text(const BenchReport& r);
std::string format_json(const BenchReport& r);

}  // namespace paddock::cli
