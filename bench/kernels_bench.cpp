// Kernel labs: mul_mat of Q4_K / Q8_0 / Q6_K weights and attention at llama3.2-1b shapes, cpu backend
// (PADDOCK_BENCH_THREADS threads, default 2; best ISA or PADDOCK_CPU) next to the ref
// backend, reporting weight GB/s and GFLOP/s; and the machine's read bandwidth, so decode
// kernels can be judged as a fraction of it. See docs/bench.md.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/bandwidth.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/eager.h"
#include "backend/ref/ref_backend.h"
#include "base/fp16.h"
#include "quant/quant.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

int bench_threads() {
  const char* v = std::getenv("PADDOCK_BENCH_THREADS");
  return v && *v ? std::max(1, std::atoi(v)) : 2;
}

std::unique_ptr<Backend> new_cpu_backend() {
  Result<std::unique_ptr<Backend>> r = make_cpu_backend(bench_threads());
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

Backend& cpu_backend() {
  static std::unique_ptr<Backend> be = new_cpu_backend();
  return *be;
}

Backend& ref_backend() {
  static std::unique_ptr<Backend> be = make_ref_backend();
  return *be;
}

// A [k, m] weight matrix: a few distinct quantized rows, repeated (speed does not depend on
// values, and quantizing 262M elements with the reference quantizer would take minutes).
std::vector<uint8_t> weights(DType t, int64_t k, int64_t m) {
  constexpr int kDistinct = 8;
  const size_t row = dtype_row_bytes(t, k);
  std::vector<uint8_t> w(row * static_cast<size_t>(m));
  for (int i = 0; i < kDistinct && i < m; ++i) {
    const std::vector<uint8_t> q =
        quantize(t, gaussian_row(static_cast<size_t>(k), 17 + static_cast<uint32_t>(i)));
    for (int64_t r = i; r < m; r += kDistinct)
      std::copy(q.begin(), q.end(), w.begin() + static_cast<ptrdiff_t>(row * static_cast<size_t>(r)));
  }
  return w;
}

enum Path : int64_t { kCpu, kRef, kCpuPinned };

// args: type, k, m, n, path (kCpuPinned: the weights pinned, so the cpu backend multiplies
// its interleaved copy; a backend of its own, since the copy lives as long as the backend)
void BM_MulMat(benchmark::State& state) {
  const DType t = static_cast<DType>(state.range(0));
  const int64_t k = state.range(1), m = state.range(2), n = state.range(3);
  const std::vector<uint8_t> w = weights(t, k, m);
  std::unique_ptr<Backend> pinned;
  if (state.range(4) == kCpuPinned) {
    pinned = new_cpu_backend();
    pinned->adopt_weight_file(w, false);
  }
  Backend& be = pinned ? *pinned : state.range(4) == kRef ? ref_backend() : cpu_backend();
  std::vector<float> x = gaussian_row(static_cast<size_t>(k * n), 5);
  std::vector<float> out(static_cast<size_t>(m * n));
  const TensorView wv = TensorView::weight(w.data(), t, {k, m});
  const TensorView xv = TensorView::contiguous(x.data(), DType::kF32, {k, n});
  const TensorView ov = TensorView::contiguous(out.data(), DType::kF32, {m, n});
  eager::mul_mat(be, wv, xv, ov);  // builds the interleaved copy outside the timing
  for (auto _ : state) {
    eager::mul_mat(be, wv, xv, ov);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::string(be.name()) + (pinned ? " pinned " : " ") + std::string(dtype_name(t)));
  state.counters["GB/s"] =
      benchmark::Counter(static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(k * m * n), benchmark::Counter::kIsIterationInvariantRate);
}

// Causal attention over an F16 KV cache at llama3.2-1b's shape (32 query heads sharing 8 kv
// heads, head dim 64): `tokens` queries at positions n_kv - tokens .. n_kv - 1, so 512 over
// 512 is a pp512 prefill and 1 over 4096 a decode step deep into the context.
// args: tokens, n_kv, use_ref
void BM_Attention(benchmark::State& state) {
  constexpr int64_t kDim = 64, kHeads = 32, kHeadsKv = 8;
  const int64_t tokens = state.range(0), n_kv = state.range(1);
  Backend& be = state.range(2) ? ref_backend() : cpu_backend();
  std::vector<float> q = gaussian_row(static_cast<size_t>(kDim * kHeads * tokens), 3);
  const std::vector<float> kf = gaussian_row(static_cast<size_t>(kDim * kHeadsKv * n_kv), 4);
  const std::vector<float> vf = gaussian_row(static_cast<size_t>(kDim * kHeadsKv * n_kv), 5);
  std::vector<uint16_t> k(kf.size()), v(vf.size());
  for (size_t i = 0; i < kf.size(); ++i) {
    k[i] = f32_to_fp16(kf[i]);
    v[i] = f32_to_fp16(vf[i]);
  }
  std::vector<float> out(q.size());
  std::vector<int32_t> pos(static_cast<size_t>(tokens));
  double flops = 0;  // q.k and p.v: 4 * dim per visible cell and query head
  for (int64_t t = 0; t < tokens; ++t) {
    pos[static_cast<size_t>(t)] = static_cast<int32_t>(n_kv - tokens + t);
    flops += 4.0 * kDim * kHeads * static_cast<double>(n_kv - tokens + t + 1);
  }
  const TensorView qv = TensorView::contiguous(q.data(), DType::kF32, {kDim, kHeads, tokens});
  const TensorView kv = TensorView::contiguous(k.data(), DType::kF16, {kDim, kHeadsKv, n_kv});
  const TensorView vv = TensorView::contiguous(v.data(), DType::kF16, {kDim, kHeadsKv, n_kv});
  const TensorView ov = TensorView::contiguous(out.data(), DType::kF32, {kDim, kHeads, tokens});
  for (auto _ : state) {
    eager::attention(be, qv, kv, vv, pos, 0.125f, ov);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::string(be.name()) + " F16 cache");
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ReadBandwidth(benchmark::State& state) {
  double gbs = 0;
  for (auto _ : state) gbs = measure_read_bandwidth_gbs(bench_threads());
  state.counters["GB/s"] = gbs;
  state.SetLabel("sum over 1 GiB, widest loads, best of 5, threads=" + std::to_string(bench_threads()));
}

constexpr DType kInterleavedTypes[] = {DType::kQ4_0, DType::kQ4_K, DType::kQ8_0, DType::kQ6_K, DType::kMXFP4};

// Types without an interleaved copy: their row-by-row dot kernels, in one shape each.
constexpr DType kRowKernelTypes[] = {DType::kQ2_K, DType::kQ3_K, DType::kQ5_K};

void matvec_shapes(benchmark::internal::Benchmark* b) {
  for (DType t : kInterleavedTypes) {
    for (auto [k, m] :
         {std::pair<int64_t, int64_t>{2048, 256}, {2048, 2048}, {2048, 8192}, {8192, 2048}, {2048, 128256}}) {
      for (Path p : {kCpu, kCpuPinned, kRef}) b->Args({static_cast<int64_t>(t), k, m, 1, p});
    }
  }
  for (DType t : kRowKernelTypes) b->Args({static_cast<int64_t>(t), 2048, 8192, 1, kCpu});
}

void matmat_shapes(benchmark::internal::Benchmark* b) {
  for (DType t : kInterleavedTypes) {
    for (auto [k, m] : {std::pair<int64_t, int64_t>{2048, 2048}, {2048, 8192}, {8192, 2048}}) {
      for (Path p : {kCpu, kCpuPinned}) b->Args({static_cast<int64_t>(t), k, m, 512, p});
    }
    b->Args({static_cast<int64_t>(t), 2048, 2048, 512, kRef});  // once per type: it is slow
  }
  for (DType t : kRowKernelTypes) b->Args({static_cast<int64_t>(t), 2048, 2048, 512, kCpu});
}

BENCHMARK(BM_ReadBandwidth)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MulMat)
    ->Name("matvec")
    ->ArgNames({"type", "K", "M", "N", "path"})
    ->Apply(matvec_shapes)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.5);
BENCHMARK(BM_MulMat)
    ->Name("matmat")
    ->ArgNames({"type", "K", "M", "N", "path"})
    ->Apply(matmat_shapes)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.5);
BENCHMARK(BM_Attention)
    ->Name("attention")
    ->ArgNames({"tokens", "n_kv", "ref"})
    ->Args({512, 512, 0})
    ->Args({1, 256, 0})
    ->Args({1, 4096, 0})
    ->Args({512, 512, 1})
    ->Args({1, 4096, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.5);

}  // namespace
}  // namespace paddock

BENCHMARK_MAIN();
