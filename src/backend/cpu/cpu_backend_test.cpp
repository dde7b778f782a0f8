// The factory and ISA selection, and that the thread count never changes a result.
#include "backend/cpu/cpu_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/bandwidth.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/test_support.h"
#include "backend/eager.h"
#include "base/threadpool.h"
#include "quant/quant.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

TEST(CpuIsaSelection, NamesRoundTrip) {
  for (CpuIsa isa : cpu_test::kAllIsas) EXPECT_EQ(cpu_isa_from_name(cpu_isa_name(isa)), isa);
  EXPECT_EQ(cpu_isa_from_name("sse"), std::nullopt);
}

TEST(CpuIsaSelection, UnsetPicksTheBestAndScalarIsAlwaysThere) {
  EXPECT_TRUE(cpu_has_isa(CpuIsa::kScalar));
  EXPECT_EQ(select_cpu_isa(std::nullopt).value(), best_cpu_isa());
  EXPECT_EQ(select_cpu_isa(std::string()).value(), best_cpu_isa());
  EXPECT_EQ(select_cpu_isa(std::string("scalar")).value(), CpuIsa::kScalar);
  EXPECT_TRUE(!cpu_has_isa(CpuIsa::kAvx512) || cpu_has_isa(CpuIsa::kAvx2));
}

TEST(CpuIsaSelection, UnknownNameIsAClearError) {
  const Result<CpuIsa> r = select_cpu_isa(std::string("neon"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected scalar, avx2 or avx512"), std::string::npos);
  EXPECT_NE(r.status().message().find("neon"), std::string::npos);
}

TEST(CpuIsaSelection, ForcingAMissingIsaFailsAtCreation) {
  for (CpuIsa isa : cpu_test::kAllIsas) {
    const Result<std::unique_ptr<Backend>> be = make_cpu_backend(1, isa);
    EXPECT_EQ(be.ok(), cpu_has_isa(isa)) << cpu_isa_name(isa);
    if (be.ok()) {
      EXPECT_EQ((*be)->name(), "cpu-" + std::string(cpu_isa_name(isa)));
    } else {
      EXPECT_NE(be.status().message().find("lacks"), std::string::npos) << be.status().message();
    }
    const Result<CpuIsa> forced = select_cpu_isa(std::string(cpu_isa_name(isa)));
    EXPECT_EQ(forced.ok(), cpu_has_isa(isa));
  }
}

// Each output is computed by one thread, in a fixed order: 1 and 2 threads agree bit for bit.
TEST(CpuBackend, ThreadCountDoesNotChangeResults) {
  for (CpuIsa isa : cpu_test::kAllIsas) {
    if (!cpu_has_isa(isa)) continue;
    for (DType t : {DType::kQ4_K, DType::kQ8_0, DType::kQ6_K, DType::kF16, DType::kQ5_1}) {
      const int64_t k = 512, m = 37, n = 7;
      std::vector<uint8_t> w;
      for (int64_t r = 0; r < m; ++r) {
        const std::vector<uint8_t> q = quantize(t, gaussian_row(k, 300 + static_cast<uint32_t>(r)));
        w.insert(w.end(), q.begin(), q.end());
      }
      std::vector<float> x = gaussian_row(static_cast<size_t>(k * n), 9);
      std::vector<float> out1(static_cast<size_t>(m * n)), out2(out1.size());
      const TensorView wv = TensorView::weight(w.data(), t, {k, m});
      const TensorView xv = TensorView::contiguous(x.data(), DType::kF32, {k, n});
      auto one = make_cpu_backend(1, isa);
      auto two = make_cpu_backend(2, isa);
      ASSERT_TRUE(one.ok() && two.ok());
      eager::mul_mat(**one, wv, xv, TensorView::contiguous(out1.data(), DType::kF32, {m, n}));
      eager::mul_mat(**two, wv, xv, TensorView::contiguous(out2.data(), DType::kF32, {m, n}));
      EXPECT_EQ(std::memcmp(out1.data(), out2.data(), out1.size() * sizeof(float)), 0)
          << dtype_name(t) << " " << cpu_isa_name(isa);
    }
  }
}

// Element-wise ops cut a row into one piece per thread when rows are fewer than threads
// (decode's single row): every element is still computed alone, so 1, 2 and 3 threads agree
// bit for bit, over rows long enough to be split and lengths that are no multiple of a line.
TEST(CpuBackend, ElementwiseOpsSplitFewRowsAcrossThreads) {
  using Op = void (*)(ThreadPool&, const TensorView&, const TensorView&, const TensorView&);
  const Op ops[] = {
      [](ThreadPool& p, const TensorView& a, const TensorView&, const TensorView& d) { cpu::tanh(p, a, d); },
      [](ThreadPool& p, const TensorView& a, const TensorView&, const TensorView& d) { cpu::gelu(p, a, d); },
      [](ThreadPool& p, const TensorView& a, const TensorView&, const TensorView& d) {
        cpu::scale(p, a, 0.3f, d);
      },
      [](ThreadPool& p, const TensorView& a, const TensorView& b, const TensorView& d) {
        cpu::geglu(p, a, b, d);
      },
      [](ThreadPool& p, const TensorView& a, const TensorView& b, const TensorView& d) {
        cpu::swiglu(p, best_cpu_isa(), a, b, d);
      },
      [](ThreadPool& p, const TensorView& a, const TensorView& b, const TensorView& d) {
        cpu::swiglu_oai(p, best_cpu_isa(), a, b, 1.702f, 7.0f, d);
      },
  };
  ThreadPool one(1), two(2), three(3);
  for (const auto& [n, rows] : {std::pair<int64_t, int64_t>{100003, 1}, {40001, 2}, {9, 1}}) {
    const std::vector<float> a = gaussian_row(static_cast<size_t>(n * rows), 21);
    const std::vector<float> b = gaussian_row(static_cast<size_t>(n * rows), 22);
    const TensorView av = TensorView::weight(a.data(), DType::kF32, {n, rows});
    const TensorView bv = TensorView::weight(b.data(), DType::kF32, {n, rows});
    for (size_t i = 0; i < std::size(ops); ++i) {
      std::vector<float> want(a.size(), NAN);
      ops[i](one, av, bv, TensorView::contiguous(want.data(), DType::kF32, {n, rows}));
      for (ThreadPool* pool : {&two, &three}) {
        std::vector<float> got(a.size(), NAN);
        ops[i](*pool, av, bv, TensorView::contiguous(got.data(), DType::kF32, {n, rows}));
        EXPECT_EQ(std::memcmp(want.data(), got.data(), got.size() * sizeof(float)), 0)
            << "op " << i << ", " << n << " x " << rows << ", " << pool->size() << " threads";
      }
    }
  }
}

TEST(CpuBackend, SupportsEveryOpOnF32) {
  auto be = make_cpu_backend(1, CpuIsa::kScalar);
  ASSERT_TRUE(be.ok());
  const DType f32[] = {DType::kF32, DType::kF32, DType::kF32};
  for (size_t i = 0; i < kOpCount; ++i) EXPECT_TRUE((*be)->supports(static_cast<Op>(i), f32)) << i;
  const DType q4k[] = {DType::kQ4_K, DType::kF32};
  EXPECT_TRUE((*be)->supports(Op::kMulMat, q4k));
  EXPECT_FALSE((*be)->supports(Op::kRmsNorm, q4k));
}

TEST(Bandwidth, ProbeReturnsAPositiveFiniteReading) {
  // A small buffer keeps the test fast; it measures caches, not DRAM, and asserts nothing
  // about speed.
  const double gbs = measure_read_bandwidth_gbs(2, size_t{4} << 20, 2);
  EXPECT_GT(gbs, 0.0);
  EXPECT_TRUE(std::isfinite(gbs));
}

}  // namespace
}  // namespace paddock
