// Each ref op against values computed here independently (in double, from the definition),
// at odd sizes (1, 7, 1025), on non-contiguous views and with broadcasting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "backend/eager.h"
#include "backend/ref/ref_backend.h"
#include "base/fp16.h"
#include "quant/quant.h"

namespace paddock {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TensorView view(std::vector<float>& v, std::initializer_list<int64_t> ne) {
  return TensorView::contiguous(v.data(), DType::kF32, ne);
}

// A view of every other column of a [n0, 2 * n1] buffer: rows not adjacent in memory.
TensorView strided_columns(std::vector<float>& v, int64_t n0, int64_t n1) {
  TensorView t = TensorView::contiguous(v.data(), DType::kF32, {n0, n1});
  t.nb[1] *= 2;
  t.nb[2] = t.nb[1] * static_cast<size_t>(n1);
  t.nb[3] = t.nb[2];
  return t;
}

class RefOps : public ::testing::TestWithParam<int64_t> {
 protected:
  std::unique_ptr<Backend> be_ = make_ref_backend();
};

TEST_P(RefOps, RmsNormMatchesDefinition) {
  const int64_t n = GetParam();
  std::vector<float> x = random_values(static_cast<size_t>(n * 3), 1);
  std::vector<float> y(x.size());
  eager::rms_norm(*be_, view(x, {n, 3}), 1e-5f, view(y, {n, 3}));
  for (int64_t r = 0; r < 3; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
    const double scale = 1.0 / std::sqrt(ss / double(n) + 1e-5);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(y[r * n + i], x[r * n + i] * scale, 1e-5 * (1 + std::abs(x[r * n + i] * scale)));
  }
}

TEST_P(RefOps, MulMatF32AndF16MatchDoubleDot) {
  const int64_t k = GetParam();
  const int64_t m = 5, n = 3;
  std::vector<float> w = random_values(static_cast<size_t>(k * m), 3);
  std::vector<float> x = random_values(static_cast<size_t>(k * n), 4);
  std::vector<uint16_t> w16(w.size());
  for (size_t i = 0; i < w.size(); ++i) w16[i] = f32_to_fp16(w[i]);
  std::vector<float> y(static_cast<size_t>(m * n)), y16(y.size());
  eager::mul_mat(*be_, view(w, {k, m}), view(x, {k, n}), view(y, {m, n}));
  eager::mul_mat(*be_, TensorView::contiguous(w16.data(), DType::kF16, {k, m}), view(x, {k, n}),
                 view(y16, {m, n}));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t r = 0; r < m; ++r) {
      double d = 0, d16 = 0;
      for (int64_t i = 0; i < k; ++i) {
        d += double(w[r * k + i]) * x[j * k + i];
        d16 += double(fp16_to_f32(w16[r * k + i])) * x[j * k + i];
      }
      EXPECT_NEAR(y[j * m + r], d, 1e-4 * std::sqrt(double(k)));
      EXPECT_NEAR(y16[j * m + r], d16, 1e-4 * std::sqrt(double(k)));
    }
  }
}

TEST_P(RefOps, GetRowsReadsF16AndF32Rows) {
  const int64_t n = GetParam();
  std::vector<float> t = random_values(static_cast<size_t>(n * 4), 5);
  std::vector<uint16_t> t16(t.size());
  for (size_t i = 0; i < t.size(); ++i) t16[i] = f32_to_fp16(t[i]);
  const std::vector<int32_t> ids = {3, 0, 3};
  std::vector<float> y(static_cast<size_t>(n * 3)), y16(y.size());
  eager::get_rows(*be_, view(t, {n, 4}), ids, view(y, {n, 3}));
  eager::get_rows(*be_, TensorView::contiguous(t16.data(), DType::kF16, {n, 4}), ids, view(y16, {n, 3}));
  for (size_t j = 0; j < ids.size(); ++j) {
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(y[j * n + i], t[ids[j] * n + i]);
      EXPECT_EQ(y16[j * n + i], fp16_to_f32(t16[ids[j] * n + i]));
    }
  }
}

TEST_P(RefOps, AddAndMulBroadcastARow) {
  const int64_t n = GetParam();
  std::vector<float> a = random_values(static_cast<size_t>(n * 3), 6);
  std::vector<float> b = random_values(static_cast<size_t>(n), 7);
  std::vector<float> s(a.size()), p(a.size());
  eager::add(*be_, view(a, {n, 3}), view(b, {n}), view(s, {n, 3}));
  eager::mul(*be_, view(a, {n, 3}), view(b, {n}), view(p, {n, 3}));
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(s[r * n + i], a[r * n + i] + b[i]);
      EXPECT_EQ(p[r * n + i], a[r * n + i] * b[i]);
    }
  }
}

TEST_P(RefOps, SwigluIsSiluGateTimesUp) {
  const int64_t n = GetParam();
  std::vector<float> g = random_values(static_cast<size_t>(n), 8, 4.0f);
  std::vector<float> u = random_values(static_cast<size_t>(n), 9);
  std::vector<float> y(static_cast<size_t>(n));
  eager::swiglu(*be_, view(g, {n}), view(u, {n}), view(y, {n}));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(y[i], g[i] / (1.0 + std::exp(-double(g[i]))) * u[i], 1e-6 * (1 + std::abs(g[i])));
  }
}

TEST_P(RefOps, CopyConvertsToF16AndBack) {
  const int64_t n = GetParam();
  std::vector<float> x = random_values(static_cast<size_t>(n), 10, 100.0f);
  std::vector<uint16_t> h(static_cast<size_t>(n));
  std::vector<float> back(static_cast<size_t>(n));
  eager::copy(*be_, view(x, {n}), TensorView::contiguous(h.data(), DType::kF16, {n}));
  eager::copy(*be_, TensorView::contiguous(h.data(), DType::kF16, {n}), view(back, {n}));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(h[i], f32_to_fp16(x[i]));
    EXPECT_EQ(back[i], fp16_to_f32(h[i]));
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, RefOps, ::testing::Values(1, 7, 1025));

TEST(RefOpsViews, NonContiguousInputsAndOutputs) {
  auto be = make_ref_backend();
  const int64_t n0 = 7, n1 = 3;
  std::vector<float> xbuf = random_values(static_cast<size_t>(n0 * n1 * 2), 11);
  std::vector<float> ybuf(xbuf.size(), -1.0f);
  const TensorView x = strided_columns(xbuf, n0, n1);
  const TensorView y = strided_columns(ybuf, n0, n1);
  eager::rms_norm(*be, x, 1e-6f, y);
  for (int64_t r = 0; r < n1; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n0; ++i) ss += double(x.f32(i, r)) * x.f32(i, r);
    for (int64_t i = 0; i < n0; ++i) EXPECT_NEAR(y.f32(i, r), x.f32(i, r) / std::sqrt(ss / n0 + 1e-6), 1e-5);
    // The gaps between the strided rows are left alone.
    for (int64_t i = 0; i < n0; ++i) EXPECT_EQ(ybuf[static_cast<size_t>((2 * r + 1) * n0 + i)], -1.0f);
  }
  // mul_mat with a strided activation view and a strided destination.
  std::vector<float> w = random_values(static_cast<size_t>(n0 * 2), 12);
  std::vector<float> obuf(static_cast<size_t>(2 * n1 * 2), 0.0f);
  const TensorView out = strided_columns(obuf, 2, n1);
  eager::mul_mat(*be, view(w, {n0, 2}), x, out);
  for (int64_t j = 0; j < n1; ++j) {
    for (int64_t r = 0; r < 2; ++r) {
      double d = 0;
      for (int64_t i = 0; i < n0; ++i) d += double(w[r * n0 + i]) * x.f32(i, j);
      EXPECT_NEAR(out.f32(r, j), d, 1e-5);
    }
  }
}

TEST(RefOpsViews, BroadcastAlongOuterDims) {
  auto be = make_ref_backend();
  std::vector<float> a = random_values(2 * 3 * 4, 13);
  std::vector<float> b = random_values(2 * 1 * 4, 14);  // repeats along ne[1]
  std::vector<float> y(a.size());
  eager::add(*be, view(a, {2, 3, 4}), view(b, {2, 1, 4}), view(y, {2, 3, 4}));
  for (int i2 = 0; i2 < 4; ++i2)
    for (int i1 = 0; i1 < 3; ++i1)
      for (int i0 = 0; i0 < 2; ++i0)
        EXPECT_EQ(y[(i2 * 3 + i1) * 2 + i0], a[(i2 * 3 + i1) * 2 + i0] + b[i2 * 2 + i0]);
}

TEST(RefRope, NormalModeRotatesAdjacentPairs) {
  auto be = make_ref_backend();
  const int64_t d = 8;
  std::vector<float> x = random_values(static_cast<size_t>(d * 2 * 2), 15);  // [8, 2 heads, 2 tokens]
  std::vector<float> y(x.size());
  const std::vector<int32_t> pos = {0, 5};
  const std::vector<float> factors = {1.0f, 2.0f};
  RopeParams p{.mode = RopeMode::kNormal,
               .n_dims = 4,
               .freq_base = 100.0f,
               .freq_scale = 0.5f,
               .freq_factors = factors};
  eager::rope(*be, view(x, {d, 2, 2}), pos, p, view(y, {d, 2, 2}));
  for (int t = 0; t < 2; ++t) {
    for (int h = 0; h < 2; ++h) {
      const float* xi = &x[(t * 2 + h) * d];
      const float* yi = &y[(t * 2 + h) * d];
      for (int i = 0; i < 2; ++i) {
        const double theta = pos[t] * 0.5 * std::pow(100.0, -2.0 * i / 4) / factors[i];
        EXPECT_NEAR(yi[2 * i], xi[2 * i] * std::cos(theta) - xi[2 * i + 1] * std::sin(theta), 1e-5);
        EXPECT_NEAR(yi[2 * i + 1], xi[2 * i] * std::sin(theta) + xi[2 * i + 1] * std::cos(theta), 1e-5);
      }
      for (int i = 4; i < d; ++i) EXPECT_EQ(yi[i], xi[i]);  // beyond n_dims: unrotated
    }
  }
}

TEST(RefRope, NeoxModeRotatesHalves) {
  auto be = make_ref_backend();
  const int64_t d = 6;
  std::vector<float> x = random_values(static_cast<size_t>(d), 16);  // [6, 1 head, 1 token]
  std::vector<float> y(x.size());
  const std::vector<int32_t> pos = {7};
  RopeParams p{
      .mode = RopeMode::kNeox, .n_dims = 6, .freq_base = 10000.0f, .freq_scale = 1.0f, .freq_factors = {}};
  eager::rope(*be, view(x, {d, 1, 1}), pos, p, view(y, {d, 1, 1}));
  for (int i = 0; i < 3; ++i) {
    const double theta = 7 * std::pow(10000.0, -2.0 * i / 6);
    EXPECT_NEAR(y[i], x[i] * std::cos(theta) - x[i + 3] * std::sin(theta), 1e-5);
    EXPECT_NEAR(y[i + 3], x[i] * std::sin(theta) + x[i + 3] * std::cos(theta), 1e-5);
  }
}

// softmax(scores) v over the visible cells (causal, windowed or all; softcapped; a sink in
// the denominator), computed plainly for each head.
void expect_attention(DType kv_type, double tol, const AttnParams& p = {.scale = 0.3f}, bool with_sinks = false) {
  auto be = make_ref_backend();
  const int64_t d = 7, n_head = 4, n_head_kv = 2, n_kv = 5, n_tok = 2;
  std::vector<float> q = random_values(static_cast<size_t>(d * n_head * n_tok), 17);
  std::vector<float> k = random_values(static_cast<size_t>(d * n_head_kv * n_kv), 18);
  std::vector<float> v = random_values(static_cast<size_t>(d * n_head_kv * n_kv), 19);
  std::vector<uint16_t> k16(k.size()), v16(v.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k16[i] = f32_to_fp16(k[i]);
    v16[i] = f32_to_fp16(v[i]);
  }
  const bool half = kv_type == DType::kF16;
  const TensorView kt = half ? TensorView::contiguous(k16.data(), DType::kF16, {d, n_head_kv, n_kv})
                             : view(k, {d, n_head_kv, n_kv});
  const TensorView vt = half ? TensorView::contiguous(v16.data(), DType::kF16, {d, n_head_kv, n_kv})
                             : view(v, {d, n_head_kv, n_kv});
  const std::vector<int32_t> pos = {2, 4};  // causal: token 0 sees cells 0..2, token 1 all five
  std::vector<float> sinks = {0.5f, -1.0f, 2.0f, 0.0f};
  std::vector<float> out(static_cast<size_t>(d * n_head * n_tok));
  eager::attention(*be, view(q, {d, n_head, n_tok}), kt, vt, pos, p,
                   with_sinks ? std::optional(view(sinks, {n_head})) : std::nullopt, view(out, {d, n_head, n_tok}));
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t hk = h / (n_head / n_head_kv);
      std::vector<double> s;
      std::vector<int64_t> cells;
      double sum = with_sinks ? std::exp(double(sinks[h])) : 0;
      for (int64_t j = 0; j < n_kv; ++j) {
        if ((p.causal && j > pos[t]) || (p.window > 0 && j <= pos[t] - p.window)) continue;
        double dot = 0;
        for (int64_t i = 0; i < d; ++i)
          dot += double(q[(t * n_head + h) * d + i]) * k[(j * n_head_kv + hk) * d + i];
        dot *= p.scale;
        if (p.softcap > 0) dot = p.softcap * std::tanh(dot / p.softcap);
        s.push_back(std::exp(dot));
        sum += s.back();
        cells.push_back(j);
      }
      for (int64_t i = 0; i < d; ++i) {
        double o = 0;
        for (size_t j = 0; j < s.size(); ++j) o += s[j] / sum * v[(cells[j] * n_head_kv + hk) * d + i];
        EXPECT_NEAR(out[(t * n_head + h) * d + i], o, tol);
      }
    }
  }
}

TEST(RefAttention, CausalGqaWithF32Cache) { expect_attention(DType::kF32, 1e-5); }
TEST(RefAttention, CausalGqaWithF16Cache) { expect_attention(DType::kF16, 2e-3); }
TEST(RefAttention, SlidingWindow) { expect_attention(DType::kF32, 1e-5, {.scale = 0.3f, .window = 2}); }
TEST(RefAttention, NonCausal) { expect_attention(DType::kF32, 1e-5, {.scale = 0.3f, .causal = false}); }
TEST(RefAttention, Softcap) { expect_attention(DType::kF32, 1e-5, {.scale = 0.9f, .softcap = 0.5f}); }
TEST(RefAttention, Sinks) { expect_attention(DType::kF32, 1e-5, {.scale = 0.3f}, /*with_sinks=*/true); }

// Block types meet activations quantized as llama.cpp's CPU backend quantizes them
// (quantized_dot: from_float, then the type's vec_dot): exactly its numbers, and within the
// activation rounding (half a step of 1/127 of the column's largest magnitude per element)
// of the F32 dot with the dequantized row. Float types meet F32 activations.
TEST(RefMulMat, EveryQuantizableTypeEqualsDequantizedDot) {
  auto be = make_ref_backend();
  const int64_t k = 512, m = 3, n = 2;  // 512: whole blocks of every type
  std::vector<float> wf = random_values(static_cast<size_t>(k * m), 22);
  std::vector<float> x = random_values(static_cast<size_t>(k * n), 23);
  int tested = 0;
  for (uint32_t id = 0; id < kDTypeIdCount; ++id) {
    const std::optional<DType> t = dtype_from_id(id);
    const QuantOps* ops = t ? quant_ops(*t) : nullptr;
    if (ops == nullptr || ops->quantize_row == nullptr || ops->vec_dot == nullptr) continue;
    SCOPED_TRACE(std::string(dtype_name(*t)));
    const std::vector<uint8_t> w = quantize(*t, wf);
    const std::vector<float> deq = dequantize(*t, w, k * m);
    std::vector<float> y(static_cast<size_t>(m * n));
    eager::mul_mat(*be, TensorView::contiguous(const_cast<uint8_t*>(w.data()), *t, {k, m}), view(x, {k, n}),
                   view(y, {m, n}));
    const bool block = dtype_info(*t).block_size > 1;
    const size_t row_bytes = dtype_row_bytes(*t, k);
    for (int64_t j = 0; j < n; ++j) {
      const std::span<const float> col(&x[static_cast<size_t>(j * k)], static_cast<size_t>(k));
      float amax = 0;
      for (float v : col) amax = std::max(amax, std::fabs(v));
      for (int64_t r = 0; r < m; ++r) {
        double d = 0, wsum = 0;
        for (int64_t i = 0; i < k; ++i) {
          d += double(deq[r * k + i]) * x[j * k + i];
          wsum += std::fabs(deq[r * k + i]);
        }
        const float got = y[j * m + r];
        if (block) {
          EXPECT_EQ(got, quantized_dot(*t, w.data() + r * row_bytes, col));
          EXPECT_NEAR(got, d, 1e-3 + wsum * amax / 254 * 1.01);
        } else {
          EXPECT_NEAR(got, d, 1e-3);
        }
      }
    }
    ++tested;
  }
  EXPECT_GE(tested, 10);
}

TEST(RefSupports, ClaimsWhatItRuns) {
  auto be = make_ref_backend();
  const std::vector<DType> q4k_f32 = {DType::kQ4_K, DType::kF32, DType::kF32};
  const std::vector<DType> f32s = {DType::kF32, DType::kF32};
  const std::vector<DType> f16s = {DType::kF16, DType::kF16};
  const std::vector<DType> iq2 = {DType::kIQ2_XXS, DType::kF32};
  const std::vector<DType> attn = {DType::kF32, DType::kF16, DType::kF16};
  EXPECT_TRUE(be->supports(Op::kMulMat, q4k_f32));
  EXPECT_TRUE(be->supports(Op::kAdd, f32s));
  EXPECT_FALSE(be->supports(Op::kAdd, f16s));
  EXPECT_FALSE(be->supports(Op::kMulMat, iq2));
  EXPECT_TRUE(be->supports(Op::kAttention, attn));
  EXPECT_TRUE(be->supports(Op::kCopy, f16s));
}

TEST(RefDequantCache, SameNumbersAsPerCallDequantization) {
  auto plain = make_ref_backend();
  auto cached = make_ref_backend({.dequant_cache_bytes = 1 << 20});
  const int64_t k = 64, m = 9;
  std::vector<float> wf = random_values(static_cast<size_t>(k * m), 20);
  std::vector<uint16_t> w(wf.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = f32_to_fp16(wf[i]);
  const TensorView wt = TensorView::contiguous(w.data(), DType::kF16, {k, m});
  for (uint32_t seed = 0; seed < 2; ++seed) {  // the second call hits the cache
    std::vector<float> x = random_values(static_cast<size_t>(k), 21 + seed);
    std::vector<float> a(static_cast<size_t>(m)), b(a.size());
    eager::mul_mat(*plain, wt, view(x, {k, 1}), view(a, {m, 1}));
    eager::mul_mat(*cached, wt, view(x, {k, 1}), view(b, {m, 1}));
    EXPECT_EQ(a, b);
  }
}

}  // namespace
}  // namespace paddock
