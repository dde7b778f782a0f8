// `paddock bench`: llama-bench-style prompt processing (pp) and generation (tg) speed of a GGUF
// file or of a synthetic model of a public shape, with the machine's read bandwidth measured
// in the same run and the decode efficiency it implies. See docs/bench.md.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cpu/bandwidth.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/graph.h"
#include "backend/placement.h"
#include "backend/split_backend.h"
#if PADDOCK_HAVE_VULKAN
#include "backend/vulkan/vulkan_backend.h"
#endif
#include "base/cpu_count.h"
#include "cli/bench_report.h"
#include "cli/bench_synthetic.h"
#include "cli/commands.h"
#include "gguf/gguf.h"
#include "gguf/keys.h"
#include "kv/kv_cache.h"
#include "model/registry.h"
#include "quant/mix.h"

namespace paddock::cli {

namespace {

constexpr const char* kUsage =
    "Usage:\n"
    "  paddock bench (--model FILE.gguf | --shape SHAPE [--type q4_k_m|q8_0|q4_0|f16|mxfp4_moe]\n"
    "                [--vocab FILE.gguf] [--save FILE.gguf]) [-p 512] [-n 128] [-r 3] [-t THREADS] [-ngl N | --gpu] [--json]\n"
    "  -p 0 or -n 0 skips that test. -ngl N puts the last N layers (the output counted as one more)\n"
    "  on the Vulkan GPU (PADDOCK_VULKAN_DEVICE, else the first), --gpu all of them; the bandwidth\n"
    "  is then the GPU's, measured by a copy on it.\n";
// llama.cpp's default n_batch / n_ubatch: longer prompts go in chunks of this many tokens.
constexpr int kBatch = 512;

struct BenchOptions {
  std::string model_path;
  std::string shape;
  std::string type = "q4_k_m";
  std::string vocab_path;
  std::string save_path;
  int n_prompt = 512;
  int n_gen = 128;
  int reps = 3;
  int threads = 0;
  int gpu_layers = 0;
  // Hidden (tests): the bandwidth probe's buffer; the real reading needs the default 1 GiB.
  int probe_mib = static_cast<int>(kBandwidthProbeBytes >> 20);
  bool json = false;
};

bool parse_int(const char* s, int min, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < min || v > 1'000'000) return false;
  *out = static_cast<int>(v);
  return true;
}

// Returns the exit code to leave with, or -1 to go on.
int parse_args(int argc, char** argv, BenchOptions* o) {
  for (int k = 1; k < argc; ++k) {  // argv[0] is "bench"
    const std::string_view a = argv[k];
    if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      return 0;
    }
    if (a == "--json") {
      o->json = true;
      continue;
    }
    if (a == "--gpu") {
      o->gpu_layers = 1'000'000;
      continue;
    }
    if (k + 1 >= argc) {
      std::fprintf(stderr, "Error: %s: expected a flag with a value, found %s\n%s",
                   a.starts_with("-") ? "missing value" : "unexpected argument", argv[k], kUsage);
      return 1;
    }
    const char* v = argv[++k];
    bool ok = true;
    if (a == "--model" || a == "-m") {
      o->model_path = v;
    } else if (a == "--shape") {
      o->shape = v;
    } else if (a == "--type") {
      o->type = v;
    } else if (a == "--vocab") {
      o->vocab_path = v;
    } else if (a == "--save") {
      o->save_path = v;
    } else if (a == "-p") {
      ok = parse_int(v, 0, &o->n_prompt);
    } else if (a == "-n") {
      ok = parse_int(v, 0, &o->n_gen);
    } else if (a == "-r") {
      ok = parse_int(v, 1, &o->reps);
    } else if (a == "-t") {
      ok = parse_int(v, 1, &o->threads);
    } else if (a == "-ngl" || a == "--num-gpu") {
      ok = parse_int(v, 0, &o->gpu_layers);
    } else if (a == "--probe-mib") {
      ok = parse_int(v, 1, &o->probe_mib);
    } else {
      std::fprintf(stderr, "Error: unknown flag: %s\n%s", argv[k - 1], kUsage);
      return 1;
    }
    if (!ok) {
      const bool zero_ok = a == "-p" || a == "-n";
      std::fprintf(stderr, "Error: %s: expected a %s integer, found \"%s\"\n", argv[k - 1],
                   zero_ok ? "non-negative" : "positive", v);
      return 1;
    }
  }
  if (o->n_prompt == 0 && o->n_gen == 0) {
    std::fprintf(stderr, "Error: -p 0 and -n 0 leave nothing to measure\n%s", kUsage);
    return 1;
  }
  if (o->model_path.empty() == o->shape.empty()) {
    std::fprintf(stderr, "Error: expected exactly one of --model and --shape\n%s", kUsage);
    return 1;
  }
  if (!o->model_path.empty() && (!o->vocab_path.empty() || !o->save_path.empty())) {
    std::fprintf(stderr, "Error: --vocab and --save build a synthetic model: they need --shape\n%s", kUsage);
    return 1;
  }
  return -1;
}

std::string temp_model_path() {
  const char* dir = std::getenv("TMPDIR");
  return (std::filesystem::path(dir != nullptr && *dir != '\0' ? dir : "/tmp") /
          ("paddock-bench-" + std::to_string(::getpid()) + ".gguf"))
      .string();
}

// A temporary model file that may not exist (a failed write); nothing to report either way.
void remove_quietly(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

// Builds the synthetic model into `path`.
Status build_synthetic(const BenchOptions& o, int threads, const std::string& path) {
  PADDOCK_ASSIGN(const SyntheticShape* shape, find_synthetic_shape(o.shape));
  const std::optional<FileType> ftype = file_type_from_name(o.type);
  if (!ftype)
    return invalid_argument("unknown --type \"" + o.type +
                            "\": expected a file type such as q4_k_m, q8_0, q4_0 or f16");
  std::unique_ptr<gguf::File> vocab;
  if (!o.vocab_path.empty()) {
    auto opened = gguf::File::open(o.vocab_path);
    if (!opened.ok()) return opened.status().with_context("--vocab " + o.vocab_path);
    vocab = std::move(opened).value();
  }
  if (!o.json)
    std::fprintf(stderr, "building synthetic %s %s into %s\n", o.shape.c_str(), o.type.c_str(), path.c_str());
  return write_synthetic_model(*shape, *ftype, vocab.get(), threads, path);
}

using Clock = std::chrono::steady_clock;

// The cpu backend, or with gpu_layers > 0 a pass split with the Vulkan backend.
Result<std::unique_ptr<Backend>> make_bench_backend(const gguf::File& file, int threads, int gpu_layers) {
  PADDOCK_ASSIGN(std::unique_ptr<Backend> cpu, make_cpu_backend(threads));
  if (gpu_layers == 0) return cpu;
#if PADDOCK_HAVE_VULKAN
  const std::string_view arch = file.get_string("general.architecture").value_or("");
  PADDOCK_ASSIGN(const int64_t n_layer, gguf::KeyReader(file, arch).required_int("block_count"));
  PADDOCK_ASSIGN(std::unique_ptr<Backend> gpu, make_vulkan_backend(""));
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(std::move(cpu));
  bs.push_back(std::move(gpu));
  return make_split_backend(std::move(bs), Placement::offload(n_layer, gpu_layers, 0, 1));
#else
  static_cast<void>(file);
  return unsupported("-ngl: this paddock was built without Vulkan (needs libvulkan-dev and glslc)");
#endif
}

// A device's streaming bandwidth (the GPU's counterpart of the host read probe): bytes read
// plus bytes written per second by its backend's copy kernel between two buffers of `bytes`,
// in one pass of 64 MiB pieces (a binding each: lavapipe binds 128 MiB at most). A kernel,
// not vkCmdCopyBuffer, which an H100's driver ran at a quarter of the memory's speed.
Result<double> measure_copy_bandwidth_gbs(Backend& be, size_t bytes) {
  constexpr size_t kPiece = size_t{64} << 20;
  bytes = std::max<size_t>(bytes / 4 * 4, 4);
  PADDOCK_ASSIGN(std::unique_ptr<Buffer> a, be.device().alloc(bytes));
  PADDOCK_ASSIGN(std::unique_ptr<Buffer> b, be.device().alloc(bytes));
  a->clear();
  Graph g;
  for (size_t at = 0; at < bytes; at += kPiece) {
    const auto n = static_cast<int64_t>(std::min(kPiece, bytes - at) / 4);
    g.copy(TensorView::in_buffer(*a, at, DType::kF32, {n}), TensorView::in_buffer(*b, at, DType::kF32, {n}),
           "bandwidth_probe");
  }
  PADDOCK_TRY(be.run_nodes(g.nodes(), {}, {}));  // warm-up
  constexpr int kReps = 5;
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < kReps; ++i) PADDOCK_TRY(be.run_nodes(g.nodes(), {}, {}));
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return 2.0 * static_cast<double>(bytes) * kReps / s / 1e9;
}

class Runner {
 public:
  Runner(const Model& model, Backend& be, KvCache& kv, int64_t n_vocab)
      : model_(model), be_(be), kv_(kv), rng_(0xbe9c4), dist_(0, static_cast<int32_t>(n_vocab - 1)) {}

  // A prompt of n random tokens into an empty cache, in chunks of kBatch; returns seconds.
  Result<double> prompt(int n) {
    kv_.clear();
    const Clock::time_point t0 = Clock::now();
    for (int done = 0; done < n;) {
      const int chunk = std::min(kBatch, n - done);
      PADDOCK_TRY(eval(chunk));
      done += chunk;
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  // One untimed token into an empty cache, then n timed single-token decodes; returns seconds.
  Result<double> generate(int n) {
    kv_.clear();
    PADDOCK_TRY(eval(1));
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < n; ++i) PADDOCK_TRY(eval(1));
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

 private:
  Status eval(int n) {
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    std::vector<int32_t> positions(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      tokens[static_cast<size_t>(i)] = dist_(rng_);
      positions[static_cast<size_t>(i)] = static_cast<int32_t>(kv_.used() + i);
    }
    // An encoder's pass makes hidden states (every token's, as mean pooling reads them).
    const SeqInput in{.kv = &kv_, .tokens = tokens, .positions = positions,
                      .outputs = model_.has_lm_head() ? Outputs::kLast : Outputs::kAll};
    return model_.forward_batch(be_, std::span(&in, 1), model_.has_lm_head() ? Head::kLogits : Head::kHidden)
        .status();
  }

  const Model& model_;
  Backend& be_;
  KvCache& kv_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int32_t> dist_;
};

Result<BenchReport> bench(const BenchOptions& o) {
  const int threads = o.threads > 0 ? o.threads : default_thread_count();
  std::string path = o.model_path;
  const bool temporary = !o.shape.empty() && o.save_path.empty();
  if (!o.shape.empty()) {
    path = temporary ? temp_model_path() : o.save_path;
    const Status built = build_synthetic(o, threads, path);
    if (!built.is_ok()) {
      if (temporary) remove_quietly(path);
      return built;
    }
  }
  // The peak RSS reported is that of loading and running the model, not of building it.
  reset_peak_rss();
  auto opened = gguf::File::open(path);
  // The mapping keeps the data of a temporary file alive; its name is not needed any more.
  if (temporary) remove_quietly(path);
  if (!opened.ok()) return opened.status().with_context(path);
  const std::unique_ptr<gguf::File> file = std::move(opened).value();

  PADDOCK_ASSIGN(std::unique_ptr<Backend> be, make_bench_backend(*file, threads, o.gpu_layers));
  PADDOCK_ASSIGN(std::unique_ptr<Model> model, load_model(*file, *be));
  // An encoder (embedding model) only embeds whole inputs: no tg test; pp is the throughput.
  const bool encoder = !model->has_lm_head();
  const int n_gen = encoder ? 0 : o.n_gen;
  if (encoder && (o.n_prompt == 0 || o.n_prompt > model->hparams().n_ctx_train)) {
    return invalid_argument("an embedding model takes -p 1.." + std::to_string(model->hparams().n_ctx_train) +
                            " (tokens per input)");
  }
  const int64_t n_ctx = std::max<int64_t>(o.n_prompt, int64_t{n_gen} + 1);
  PADDOCK_ASSIGN(KvCache kv, KvCache::create(kv_config(model->hparams(), n_ctx, DType::kF16), *be));
  Runner runner(*model, *be, kv, model->hparams().n_vocab);

  // Warm-up, as llama-bench does: one prompt and one decoded token (of the tests that run).
  if (o.n_prompt > 0) PADDOCK_TRY(runner.prompt(o.n_prompt).status());
  if (n_gen > 0) PADDOCK_TRY(runner.generate(1).status());
  std::vector<double> pp;
  std::vector<double> tg;
  for (int r = 0; r < o.reps; ++r) {
    if (o.n_prompt > 0) {
      PADDOCK_ASSIGN(const double pp_s, runner.prompt(o.n_prompt));
      pp.push_back(o.n_prompt / pp_s);
    }
    if (n_gen > 0) {
      PADDOCK_ASSIGN(const double tg_s, runner.generate(n_gen));
      tg.push_back(n_gen / tg_s);
    }
  }

  BenchReport rep;
  const std::string stem = std::filesystem::path(o.shape.empty() ? path : o.shape).stem().string();
  rep.model = std::string(file->get_string("general.name").value_or(stem));
  rep.arch = model->hparams().arch;
  const std::optional<int64_t> ftype_id = file->get_int("general.file_type");
  std::optional<std::string_view> type_name;
  if (ftype_id && *ftype_id >= 0) {
    if (auto ft = file_type_from_id(static_cast<uint32_t>(*ftype_id))) type_name = file_type_name(*ft);
  }
  rep.type = std::string(type_name.value_or("unknown"));
  rep.size_bytes = total_tensor_bytes(*file);
  rep.n_params = total_params(*file);
  rep.bytes_per_token = weight_bytes_per_token(*file);
  rep.backend = std::string(be->name());
  rep.threads = threads;
  rep.n_prompt = o.n_prompt;
  rep.n_gen = n_gen;
  rep.encoder = encoder;
  rep.pp_tps = mean_sd(pp);
  rep.tg_tps = mean_sd(tg);
  // Read before the bandwidth probe, whose 1 GiB buffer would otherwise be the peak.
  rep.peak_rss_bytes = peak_rss_bytes().value_or(0);
  Backend& last = be->for_layer(model->hparams().n_layer - 1);
  if (last.device().kind() == DeviceKind::kHost) {
    rep.bandwidth_gbs = measure_read_bandwidth_gbs(threads, static_cast<size_t>(o.probe_mib) << 20);
  } else {
    PADDOCK_ASSIGN(rep.bandwidth_gbs,
                   measure_copy_bandwidth_gbs(last, static_cast<size_t>(o.probe_mib) << 20));
    rep.bandwidth_device = std::string(last.device().name());
  }
  return rep;
}

}  // namespace

int run_bench(int argc, char** argv) {
  BenchOptions o;
  if (const int rc = parse_args(argc, argv, &o); rc >= 0) return rc;
  Result<BenchReport> rep = bench(o);
  if (!rep.ok()) {
    std::fprintf(stderr, "Error: %s\n", rep.status().to_string().c_str());
    return 1;
  }
  std::fputs((o.json ? format_json(*rep) : format_text(*rep)).c_str(), stdout);
  return 0;
}

}  // namespace paddock::cli
