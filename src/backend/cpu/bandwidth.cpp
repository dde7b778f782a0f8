#include "backend/cpu/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backend/cpu/isa.h"
#include "backend/cpu/simd_x86.h"
#include "base/check.h"
#include "base/threadpool.h"

namespace paddock {

namespace {

using SumFn = uint64_t (*)(const uint64_t* p, size_t n);  // n multiple of 32 words

uint64_t sum_scalar(const uint64_t* p, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i < n; i += 4) {
    a += p[i];
    b += p[i + 1];
    c += p[i + 2];
    d += p[i + 3];
  }
  return a + b + c + d;
}

#if defined(PADDOCK_X86)
PADDOCK_TARGET_AVX2 uint64_t sum_avx2(const uint64_t* p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (size_t i = 0; i < n; i += 16) {
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    c = _mm256_add_epi64(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    d = _mm256_add_epi64(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

PADDOCK_TARGET_AVX512 uint64_t sum_avx512(const uint64_t* p, size_t n) {
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
  for (size_t i = 0; i < n; i += 32) {
    a = _mm512_add_epi64(a, _mm512_load_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + i + 8));
    c = _mm512_add_epi64(c, _mm512_load_si512(p + i + 16));
    d = _mm512_add_epi64(d, _mm512_load_si512(p + i + 24));
  }
  // Stored and summed by hand: GCC 12's _mm512_reduce_add_epi64 trips -Wuninitialized.
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a, b), _mm512_add_epi64(c, d)));
  uint64_t total = 0;
  for (uint64_t v : lanes) total += v;
  return total;
}
#endif

SumFn widest_sum() {
#if defined(PADDOCK_X86)
  if (cpu_has_isa(CpuIsa::kAvx512)) return sum_avx512;
  if (cpu_has_isa(CpuIsa::kAvx2)) return sum_avx2;
#endif
  return sum_scalar;
}

struct AlignedFree {
  void operator()(uint64_t* p) const { std::free(p); }
};

}  // namespace

double measure_read_bandwidth_gbs(int n_threads, size_t bytes, int passes) {
  constexpr size_t kAlign = 4096;
  bytes = std::max<size_t>(bytes, size_t{1} << 20) / kAlign * kAlign;
  passes = std::max(passes, 1);
  std::unique_ptr<uint64_t, AlignedFree> buf(static_cast<uint64_t*>(std::aligned_alloc(kAlign, bytes)));
  PADDOCK_CHECK_MSG(buf != nullptr, "bandwidth probe: out of memory");
  const size_t words = bytes / sizeof(uint64_t);
  ThreadPool pool(n_threads);
  const int64_t chunks = static_cast<int64_t>(words / 32);
  // Each thread writes (faults in) the part it later reads, so pages sit near their reader.
  pool.parallel_for(chunks, [&](int64_t b, int64_t e, int) {
    for (size_t i = static_cast<size_t>(b) * 32; i < static_cast<size_t>(e) * 32; ++i) buf.get()[i] = i;
  });
  const SumFn sum = widest_sum();
  std::vector<uint64_t> sinks(static_cast<size_t>(pool.size()));
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(chunks, [&](int64_t b, int64_t e, int t) {
      sinks[static_cast<size_t>(t)] += sum(buf.get() + b * 32, static_cast<size_t>(e - b) * 32);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(bytes) / s / 1e9);
  }
  // The sums feed a volatile sink so the reads cannot be optimised away.
  volatile uint64_t sink = 0;
  for (uint64_t s : sinks) sink = sink + s;
  return best;
}

}  // namespace paddock
