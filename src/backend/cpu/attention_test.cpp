// The AVX2 tile kernels against the scalar ones on both query layouts, with masked cells,
// padding lanes and rows that have seen nothing yet. The whole op is checked against the
// ref backend in tests/golden/backend_ops_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backend/cpu/attention_kernels.h"
#include "backend/cpu/test_support.h"
#include "base/fp16.h"
#include "quant/quant.h"
#include "quant/test_data.h"
#include "tensor/dtype.h"

namespace paddock {
namespace {

using quant_test::gaussian_row;

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, double rel,
                     const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
    } else {
      EXPECT_NEAR(got[i], want[i], rel * std::max(1.0f, std::fabs(want[i]))) << what << " [" << i << "]";
    }
  }
}

TEST(AttentionTileKernels, Avx2MatchesScalar) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  const cpu::AttentionKernels& scalar = cpu::attention_kernels_scalar();
  const cpu::AttentionKernels& avx2 = cpu::attention_kernels(CpuIsa::kAvx2);
  constexpr int64_t kDk = 24, kDv = 40, kRs = 24;  // three lane vectors; dims padded to 8
  for (int rows : {1, 3, 4, 5, 13}) {
    for (int nc : {1, 5, cpu::kAttnMaxTile}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + " cells " + std::to_string(nc));
      const std::vector<float> rows_q = gaussian_row(static_cast<size_t>(rows * kDk), 1);
      // Row-major (padded to kAttnDotRows rows) and transposed (padded to whole vectors).
      std::vector<float> q(static_cast<size_t>(std::max(rows, cpu::kAttnDotRows) * kDk));
      const int qs = (rows + 7) / 8 * 8;
      std::vector<float> qt(static_cast<size_t>(kDk * qs));
      for (int r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < kDk; ++i) {
          q[static_cast<size_t>(r * kDk + i)] = rows_q[static_cast<size_t>(r * kDk + i)];
          qt[static_cast<size_t>(i * qs + r)] = rows_q[static_cast<size_t>(r * kDk + i)];
        }
      }
      const std::vector<float> k = gaussian_row(static_cast<size_t>(cpu::kAttnMaxTile * kDk), 2);
      const std::vector<float> v = gaussian_row(static_cast<size_t>(cpu::kAttnMaxTile * kDv), 3);
      std::vector<float> s_want(static_cast<size_t>(cpu::kAttnMaxTile * kRs), 0.0f), s_got = s_want;
      scalar.scores(q.data(), qt.data(), k.data(), kDk, rows, kRs, nc, 0.3f, s_want.data());
      avx2.scores(q.data(), qt.data(), k.data(), kDk, rows, kRs, nc, 0.3f, s_got.data());
      for (int j = 0; j < nc; ++j) {
        for (int r = 0; r < rows; ++r) {
          const size_t at = static_cast<size_t>(j * kRs + r);
          EXPECT_NEAR(s_got[at], s_want[at], 1e-5 * std::max(1.0f, std::fabs(s_want[at]))) << "score " << at;
        }
      }
      // Softmax from the same scores: lanes with a running state, fresh lanes (m = -inf),
      // limits before, inside and past the tile, and padding lanes (-1).
      std::vector<int32_t> lim(kRs, -1);
      std::vector<float> m(kRs, -INFINITY), l(kRs, 0.0f);
      for (int r = 0; r < rows; ++r) {
        lim[static_cast<size_t>(r)] = (r * 7) % (nc + 3) - 1;
        if (r % 2 == 1) {
          m[static_cast<size_t>(r)] = 0.5f * static_cast<float>(r % 5) - 1.0f;
          l[static_cast<size_t>(r)] = 2.0f + static_cast<float>(r);
        }
      }
      std::vector<float> m_got = m, l_got = l, c_want(kRs), c_got(kRs);
      s_got = s_want;
      scalar.softmax(s_want.data(), kRs, nc, lim.data(), m.data(), l.data(), c_want.data());
      avx2.softmax(s_got.data(), kRs, nc, lim.data(), m_got.data(), l_got.data(), c_got.data());
      expect_near_all(m_got, m, 0, "m");
      expect_near_all(l_got, l, 1e-6, "l");
      expect_near_all(c_got, c_want, 1e-6, "c");
      for (float x : l_got) EXPECT_FALSE(std::isnan(x));
      for (int j = 0; j < nc; ++j) {
        for (int r = 0; r < kRs; ++r) {
          const size_t at = static_cast<size_t>(j * kRs + r);
          EXPECT_NEAR(s_got[at], s_want[at], 1e-6) << "p " << at;
          if (j > lim[static_cast<size_t>(r)]) {
            EXPECT_EQ(s_got[at], 0.0f) << "masked p " << at;
          }
        }
      }
      std::vector<float> acc_want = gaussian_row(static_cast<size_t>(rows * kDv), 4), acc_got = acc_want;
      scalar.pv(s_want.data(), kRs, v.data(), kDv, rows, nc, c_want.data(), acc_want.data());
      avx2.pv(s_want.data(), kRs, v.data(), kDv, rows, nc, c_want.data(), acc_got.data());
      expect_near_all(acc_got, acc_want, 1e-5, "acc");
    }
  }
}

// Decode straight from an F16 or Q8_0 cache gives exactly what the tile kernels give on the
// tile converted to F32: the same products in the same order, conversion being exact (Q8_0:
// q * d in float either way). Rows sit in a cache with several kv heads per cell, and an odd
// last cell sits at the end of the buffer, so a read past the tile's cells would fault under
// ASan.
TEST(AttentionTileKernels, DirectReadsMatchConvertedTile) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  const cpu::AttentionKernels& avx2 = cpu::attention_kernels(CpuIsa::kAvx2);
  struct Case {
    DType type;
    const cpu::DirectKernels& direct;
    cpu::TileToF32 tile;
    int64_t dk, dv;  // multiples of the type's block
  };
  for (const Case& tc : {Case{DType::kF16, avx2.f16_direct, avx2.f16_tile, 24, 40},
                         Case{DType::kQ8_0, avx2.q8_0_direct, avx2.q8_0_tile, 32, 64}}) {
    ASSERT_NE(tc.direct.scores, nullptr) << dtype_name(tc.type);
    ASSERT_NE(tc.direct.pv, nullptr) << dtype_name(tc.type);
    constexpr int64_t kRs = 8, kHeads = 3, kHead = 1;
    const int64_t dk = tc.dk, dv = tc.dv;
    for (int rows : {1, 3, 4}) {
      for (int nc : {1, 5, cpu::kAttnMaxTile}) {
        SCOPED_TRACE(std::string(dtype_name(tc.type)) + " rows " + std::to_string(rows) + " cells " +
                     std::to_string(nc));
        // Cell-major caches of kHeads heads; the tile is head kHead's rows.
        auto cache = [&](int64_t d, uint32_t seed) {
          const std::vector<float> f = gaussian_row(static_cast<size_t>(nc * kHeads * d), seed);
          std::vector<uint8_t> bytes(dtype_row_bytes(tc.type, d) * static_cast<size_t>(nc * kHeads));
          quant_ops(tc.type)->quantize_row(f.data(), bytes.data(), static_cast<int64_t>(f.size()));
          return bytes;
        };
        const std::vector<uint8_t> k = cache(dk, 5), v = cache(dv, 6);
        auto rows_of = [&](const std::vector<uint8_t>& c, int64_t d) {
          const size_t head = dtype_row_bytes(tc.type, d);
          return cpu::TileRows{c.data() + kHead * head, kHeads * head, head, 1, nc, d};
        };
        std::vector<float> kt(static_cast<size_t>(cpu::kAttnMaxTile * dk)),
            vt(static_cast<size_t>(cpu::kAttnMaxTile * dv));
        tc.tile(rows_of(k, dk), kt.data(), dk);
        tc.tile(rows_of(v, dv), vt.data(), dv);

        std::vector<float> q(static_cast<size_t>(cpu::kAttnDotRows * dk), 0.0f);
        const std::vector<float> qr = gaussian_row(static_cast<size_t>(rows * dk), 7);
        std::copy(qr.begin(), qr.end(), q.begin());
        std::vector<float> s_want(static_cast<size_t>(cpu::kAttnMaxTile * kRs), 0.0f), s_got = s_want;
        avx2.scores(q.data(), nullptr, kt.data(), dk, rows, kRs, nc, 0.3f, s_want.data());
        tc.direct.scores(q.data(), rows_of(k, dk), kRs, 0.3f, s_got.data());
        for (int j = 0; j < nc; ++j) {
          for (int r = 0; r < rows; ++r) {
            const size_t at = static_cast<size_t>(j * kRs + r);
            EXPECT_EQ(s_got[at], s_want[at]) << "score " << at;
          }
        }
        std::vector<float> c(kRs);
        for (int r = 0; r < kRs; ++r) c[static_cast<size_t>(r)] = 0.25f * static_cast<float>(r + 1);
        std::vector<float> acc_want = gaussian_row(static_cast<size_t>(rows * dv), 8), acc_got = acc_want;
        avx2.pv(s_want.data(), kRs, vt.data(), dv, rows, nc, c.data(), acc_want.data());
        tc.direct.pv(s_want.data(), kRs, rows_of(v, dv), rows, c.data(), acc_got.data());
        EXPECT_EQ(acc_got, acc_want);
      }
    }
  }
}

// The F16 row ops (ggml's flash-attention roundings) give the scalar ops' bits on every
// path: the dot's summation order is fixed (ggml's AVX2 one), and scale and mad round each
// element to F16 the same way.
TEST(AttentionF16RowKernels, Avx2MatchesScalarBitForBit) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  const F16Ops& scalar = f16_ops_scalar();
  ASSERT_NE(cpu::attention_kernels(CpuIsa::kAvx2).f16_rows, nullptr);
  const F16Ops& avx2 = *cpu::attention_kernels(CpuIsa::kAvx2).f16_rows;
  auto to_f16 = [](const std::vector<float>& x) {
    std::vector<uint16_t> h(x.size());
    for (size_t i = 0; i < x.size(); ++i) h[i] = f32_to_fp16(x[i]);
    return h;
  };
  for (int64_t n : {8, 32, 40, 64, 72, 128, 200, 256}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const std::vector<uint16_t> q = to_f16(gaussian_row(static_cast<size_t>(n), 11));
    const std::vector<uint16_t> k = to_f16(gaussian_row(static_cast<size_t>(n), 12));
    const float want = scalar.dot(q.data(), k.data(), n);
    const float got = avx2.dot(q.data(), k.data(), n);
    EXPECT_EQ(std::memcmp(&got, &want, sizeof(float)), 0) << got << " vs " << want;
    // A few online-softmax steps: rescales and fused multiply-adds into an F16 accumulator.
    std::vector<uint16_t> acc_want(static_cast<size_t>(n), 0), acc_got = acc_want;
    for (int step = 0; step < 6; ++step) {
      const std::vector<uint16_t> v = to_f16(gaussian_row(static_cast<size_t>(n), 20 + step));
      const float ms = 0.37f + 0.1f * static_cast<float>(step);
      const float vs = 0.9f - 0.13f * static_cast<float>(step);
      scalar.scale(acc_want.data(), n, ms);
      avx2.scale(acc_got.data(), n, ms);
      scalar.mad(acc_want.data(), v.data(), n, vs);
      avx2.mad(acc_got.data(), v.data(), n, vs);
    }
    EXPECT_EQ(acc_got, acc_want);
  }
}

// The AVX2 walk (several query rows per cell, accumulators held in F32) gives the scalar
// loop's bits: head dims with and without a tail past 32, a softcap, new maxima and not.
TEST(AttentionF16RowKernels, Avx2WalkMatchesTheScalarLoopBitForBit) {
  PADDOCK_SKIP_WITHOUT_ISA(CpuIsa::kAvx2);
  const F16Ops& avx2 = *cpu::attention_kernels(CpuIsa::kAvx2).f16_rows;
  ASSERT_NE(avx2.walk, nullptr);
  for (int64_t d : {64, 80, 128}) {
    for (float softcap : {0.0f, 30.0f}) {
      SCOPED_TRACE("d " + std::to_string(d) + " softcap " + std::to_string(softcap));
      const int rows = 4;
      const int64_t n = 37;
      std::vector<uint16_t> q(static_cast<size_t>(rows * d)), kv(static_cast<size_t>(2 * n * d));
      const std::vector<float> qf = gaussian_row(q.size(), 31, 2.0f), kvf = gaussian_row(kv.size(), 32, 2.0f);
      for (size_t i = 0; i < q.size(); ++i) q[i] = f32_to_fp16(qf[i]);
      for (size_t i = 0; i < kv.size(); ++i) kv[i] = f32_to_fp16(kvf[i]);
      std::vector<const uint16_t*> k_rows, v_rows;
      for (int64_t j = 0; j < n; ++j) {
        k_rows.push_back(&kv[static_cast<size_t>(j * d)]);
        v_rows.push_back(&kv[static_cast<size_t>((n + j) * d)]);
      }
      const F16Cells cells{k_rows.data(), v_rows.data(), n};
      std::vector<float> m_want(rows, -INFINITY), l_want(rows, 0.0f), m_got = m_want, l_got = l_want;
      std::vector<uint16_t> acc_want(static_cast<size_t>(rows * d), 0), acc_got = acc_want;
      const float kq_scale = softcap > 0 ? 0.125f / softcap : 0.125f;
      f16_walk(f16_ops_scalar(), q.data(), rows, d, d, cells, kq_scale, softcap, m_want.data(), l_want.data(),
               acc_want.data());
      avx2.walk(q.data(), rows, d, d, cells, kq_scale, softcap, m_got.data(), l_got.data(), acc_got.data());
      EXPECT_EQ(acc_got, acc_want);
      EXPECT_EQ(m_got, m_want);
      EXPECT_EQ(l_got, l_want);
    }
  }
}

}  // namespace
}  // namespace paddock
