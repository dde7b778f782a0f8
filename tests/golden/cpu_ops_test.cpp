// The cpu backend against the ref backend, op by op: every op x type x odd sizes (1, 7, 1025
// rows; 1, 3, 17 columns) x views with padded strides and broadcasting, for each ISA path
// this CPU has (forced scalar included) with 1 and 2 threads. mul_mat is also held to
// quantized_dot (the activation-quantizing dot of quant.h) with a tight tolerance, since the
// cpu path quantizes activations and the ref path does not.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/eager.h"
#include "backend/ref/ref_backend.h"
#include "base/fp16.h"
#include "quant/quant.h"

namespace paddock {
namespace {

struct Param {
  CpuIsa isa;
  int threads;
};

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::string(cpu_isa_name(info.param.isa)) + "_t" + std::to_string(info.param.threads);
}

std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// An F32 tensor whose rows are `pad` floats longer than ne[0] (pad > 0: a non-contiguous view).
struct F32Tensor {
  std::vector<float> storage;
  TensorView view;
};

F32Tensor f32_tensor(std::array<int64_t, 4> ne, uint32_t seed, int64_t pad = 0, float sigma = 1.0f) {
  F32Tensor t;
  const int64_t row = ne[0] + pad;
  t.storage = gaussian(static_cast<size_t>(row * ne[1] * ne[2] * ne[3]), seed, sigma);
  t.view.data = t.storage.data();
  t.view.type = DType::kF32;
  t.view.ne = ne;
  t.view.nb = {sizeof(float), static_cast<size_t>(row) * sizeof(float), 0, 0};
  t.view.nb[2] = t.view.nb[1] * static_cast<size_t>(ne[1]);
  t.view.nb[3] = t.view.nb[2] * static_cast<size_t>(ne[2]);
  return t;
}

void expect_close(const TensorView& got, const TensorView& want, double rel, const std::string& what) {
  ASSERT_EQ(got.ne, want.ne);
  int failures = 0;
  for (int64_t i3 = 0; i3 < want.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < want.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < want.ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < want.ne[0]; ++i0) {
          const float w = want.f32(i0, i1, i2, i3);
          const float g = got.f32(i0, i1, i2, i3);
          if (std::fabs(g - w) > rel * std::max(1.0, std::fabs(static_cast<double>(w))) && failures++ < 5) {
            ADD_FAILURE() << what << " at (" << i0 << "," << i1 << "," << i2 << "," << i3 << "): got " << g
                          << " want " << w;
          }
        }
      }
    }
  }
}

class CpuOps : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!cpu_has_isa(GetParam().isa)) {
      GTEST_SKIP() << "SKIPPED LOUDLY: this CPU lacks " << cpu_isa_name(GetParam().isa);
    }
    Result<std::unique_ptr<Backend>> be = make_cpu_backend(GetParam().threads, GetParam().isa);
    ASSERT_TRUE(be.ok()) << be.status().to_string();
    cpu_ = std::move(be).value();
    ref_ = make_ref_backend();
  }
  std::unique_ptr<Backend> cpu_;
  std::unique_ptr<Backend> ref_;
};

constexpr DType kTypes[] = {
    DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ4_0,   DType::kQ4_1,
    DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ2_K,   DType::kQ3_K,
    DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS,
};

// How far activation quantization may move a dot, relative to sum |w x|.
double activation_tolerance(DType t) {
  if (quant_ops(t)->vec_dot == nullptr) return 1e-5;  // dequantized to F32 first
  switch (quant_ops(t)->vec_dot_type) {
    case DType::kF32: return 1e-5;
    case DType::kF16: return 2e-3;
    case DType::kBF16: return 1e-2;
    default: return 2e-2;
  }
}

void check_mul_mat(Backend& cpu, Backend& ref, DType t, int64_t k, int64_t m, int64_t n, bool padded) {
  SCOPED_TRACE(std::string(dtype_name(t)) + " K=" + std::to_string(k) + " M=" + std::to_string(m) +
               " N=" + std::to_string(n) + (padded ? " padded" : ""));
  // Weights: rows quantized from Gaussian data, laid out with a row stride one block longer.
  const size_t row_bytes = dtype_row_bytes(t, k);
  const size_t stride = padded ? row_bytes + dtype_info(t).type_size : row_bytes;
  std::vector<uint8_t> wbytes(stride * static_cast<size_t>(m));
  std::vector<std::vector<float>> wrows;
  for (int64_t r = 0; r < m; ++r) {
    const std::vector<uint8_t> q =
        quantize(t, gaussian(static_cast<size_t>(k), 1000 + static_cast<uint32_t>(r)));
    std::copy(q.begin(), q.end(), wbytes.begin() + static_cast<ptrdiff_t>(stride * static_cast<size_t>(r)));
    wrows.push_back(dequantize(t, q, k));
  }
  TensorView w = TensorView::weight(wbytes.data(), t, {k, m});
  w.nb[1] = stride;
  w.nb[2] = w.nb[3] = stride * static_cast<size_t>(m);
  // Activations [K, n] or [K, n/..., 2] batched; padded rows when asked.
  const bool batched = n % 2 == 0;
  const std::array<int64_t, 4> xne =
      batched ? std::array<int64_t, 4>{k, n / 2, 2, 1} : std::array<int64_t, 4>{k, n, 1, 1};
  F32Tensor x = f32_tensor(xne, 7, padded ? 3 : 0);
  F32Tensor out_cpu = f32_tensor({m, xne[1], xne[2], 1}, 1, padded ? 5 : 0);
  F32Tensor out_ref = f32_tensor({m, xne[1], xne[2], 1}, 2);
  eager::mul_mat(cpu, w, x.view, out_cpu.view);
  eager::mul_mat(ref, w, x.view, out_ref.view);
  int failures = 0;
  for (int64_t i2 = 0; i2 < xne[2]; ++i2) {
    for (int64_t j = 0; j < xne[1]; ++j) {
      const float* col = &x.view.f32(0, j, i2);
      for (int64_t r = 0; r < m; ++r) {
        double abs_sum = 0;
        for (int64_t i = 0; i < k; ++i) abs_sum += std::fabs(static_cast<double>(wrows[r][i]) * col[i]);
        const float got = out_cpu.view.f32(r, j, i2);
        const float want_ref = out_ref.view.f32(r, j, i2);
        const float want_q = quant_ops(t)->vec_dot == nullptr
                                 ? want_ref
                                 : quantized_dot(t, wbytes.data() + stride * static_cast<size_t>(r),
                                                 std::span<const float>(col, static_cast<size_t>(k)));
        const bool ok_ref = std::fabs(got - want_ref) <= activation_tolerance(t) * abs_sum + 1e-6;
        const bool ok_q = std::fabs(got - want_q) <= 2e-5 * abs_sum + 1e-6;
        if ((!ok_ref || !ok_q) && failures++ < 5) {
          ADD_FAILURE() << "row " << r << " col " << j << "," << i2 << ": cpu " << got << " ref " << want_ref
                        << " quantized_dot " << want_q << " (sum|wx| " << abs_sum << ")";
        }
      }
    }
  }
}

TEST_P(CpuOps, MulMatEveryTypeOddShapes) {
  for (DType t : kTypes) {
    const int64_t bs = dtype_info(t).block_size;
    for (int64_t k : {bs, 7 * bs}) {
      for (int64_t m : {1, 7}) {
        for (int64_t n : {1, 3, 17}) check_mul_mat(*cpu_, *ref_, t, k, m, n, false);
      }
    }
  }
}

TEST_P(CpuOps, MulMatPaddedViewsAndBatches) {
  for (DType t : kTypes) check_mul_mat(*cpu_, *ref_, t, 2 * dtype_info(t).block_size, 7, 6, true);
}

TEST_P(CpuOps, MulMatDequantizeOnlyTypes) {
  for (DType t : {DType::kQ8_1, DType::kQ8_K})
    check_mul_mat(*cpu_, *ref_, t, 2 * dtype_info(t).block_size, 7, 3, true);
}

TEST_P(CpuOps, MulMatManyRows) {
  for (DType t : {DType::kQ4_K, DType::kQ8_0, DType::kQ6_K, DType::kF16}) {
    check_mul_mat(*cpu_, *ref_, t, 256, 1025, 1, false);
    check_mul_mat(*cpu_, *ref_, t, 256, 1025, 5, false);
  }
}

TEST_P(CpuOps, GetRowsEveryType) {
  for (DType t : kTypes) {
    const int64_t k = 3 * dtype_info(t).block_size;
    const int64_t rows = 7;
    std::vector<uint8_t> table;
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<uint8_t> q =
          quantize(t, gaussian(static_cast<size_t>(k), 50 + static_cast<uint32_t>(r)));
      table.insert(table.end(), q.begin(), q.end());
    }
    const TensorView tv = TensorView::weight(table.data(), t, {k, rows});
    const std::vector<int32_t> ids = {6, 0, 3, 3, 1};
    F32Tensor a = f32_tensor({k, 5, 1, 1}, 1);
    F32Tensor b = f32_tensor({k, 5, 1, 1}, 2);
    eager::get_rows(*cpu_, tv, ids, a.view);
    eager::get_rows(*ref_, tv, ids, b.view);
    expect_close(a.view, b.view, 0, "get_rows " + std::string(dtype_name(t)));
  }
}

TEST_P(CpuOps, RmsNormSwiglu) {
  for (int64_t n : {1, 7, 1025}) {
    for (int64_t pad : {0, 3}) {
      F32Tensor x = f32_tensor({n, 3, 2, 1}, 3, pad);
      F32Tensor up = f32_tensor({n, 3, 2, 1}, 4, pad);
      F32Tensor a = f32_tensor({n, 3, 2, 1}, 5, pad);
      F32Tensor b = f32_tensor({n, 3, 2, 1}, 6);
      eager::rms_norm(*cpu_, x.view, 1e-5f, a.view);
      eager::rms_norm(*ref_, x.view, 1e-5f, b.view);
      expect_close(a.view, b.view, 1e-6, "rms_norm n=" + std::to_string(n));
      eager::swiglu(*cpu_, x.view, up.view, a.view);
      eager::swiglu(*ref_, x.view, up.view, b.view);
      expect_close(a.view, b.view, 1e-6, "swiglu n=" + std::to_string(n));
    }
  }
}

TEST_P(CpuOps, MulAddBroadcastAndInPlace) {
  const std::array<int64_t, 4> a_ne = {7, 6, 3, 2};
  for (std::array<int64_t, 4> b_ne :
       {std::array<int64_t, 4>{7, 6, 3, 2}, {7, 1, 1, 1}, {1, 6, 1, 1}, {7, 3, 3, 1}, {1, 1, 1, 1}}) {
    for (int64_t pad : {0, 2}) {
      F32Tensor a = f32_tensor(a_ne, 8, pad);
      F32Tensor b = f32_tensor(b_ne, 9, pad);
      F32Tensor c = f32_tensor(a_ne, 10, pad);
      F32Tensor d = f32_tensor(a_ne, 11);
      eager::mul(*cpu_, a.view, b.view, c.view);
      eager::mul(*ref_, a.view, b.view, d.view);
      expect_close(c.view, d.view, 0, "mul");
      eager::add(*cpu_, a.view, b.view, c.view);
      eager::add(*ref_, a.view, b.view, d.view);
      expect_close(c.view, d.view, 0, "add");
      eager::add(*ref_, a.view, b.view, d.view);
      eager::add(*cpu_, a.view, b.view, a.view);  // in place
      expect_close(a.view, d.view, 0, "add in place");
    }
  }
}

TEST_P(CpuOps, RopeBothModesWithFactorsAndPartialDims) {
  const std::vector<float> factors = {1.0f, 1.5f, 2.0f, 4.0f, 8.0f, 1.0f, 3.0f, 2.5f};
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    for (int32_t n_dims : {16, 10}) {
      for (int64_t tokens : {1, 3, 17}) {
        RopeParams p;
        p.mode = mode;
        p.n_dims = n_dims;
        p.freq_base = 500000.0f;
        p.freq_scale = 0.5f;
        if (n_dims == 16) p.freq_factors = factors;
        std::vector<int32_t> pos;
        for (int64_t t = 0; t < tokens; ++t) pos.push_back(static_cast<int32_t>(5 + 37 * t));
        F32Tensor x = f32_tensor({16, 5, tokens, 1}, 12, 3);
        F32Tensor a = f32_tensor({16, 5, tokens, 1}, 13);
        F32Tensor b = f32_tensor({16, 5, tokens, 1}, 14);
        eager::rope(*cpu_, x.view, pos, p, a.view);
        eager::rope(*ref_, x.view, pos, p, b.view);
        expect_close(a.view, b.view, 0, "rope");
      }
    }
  }
}

// A K or V cache [d, n_head_kv, n_kv] of type t from Gaussian rows, laid out like a cache
// view: each cell's rows followed by one spare row, so cells are not packed.
struct CacheTensor {
  std::vector<uint8_t> bytes;
  TensorView view;
};

CacheTensor cache_tensor(DType t, int64_t d, int64_t n_head_kv, int64_t n_kv, uint32_t seed, float sigma) {
  CacheTensor c;
  const size_t row = dtype_row_bytes(t, d);
  const size_t cell = row * static_cast<size_t>(n_head_kv + 1);
  c.bytes.resize(cell * static_cast<size_t>(n_kv));
  const std::vector<float> values = gaussian(static_cast<size_t>(d * n_head_kv * n_kv), seed, sigma);
  for (int64_t j = 0; j < n_kv; ++j) {
    for (int64_t h = 0; h < n_head_kv; ++h) {
      const std::vector<uint8_t> q =
          quantize(t, std::span<const float>(&values[static_cast<size_t>((j * n_head_kv + h) * d)],
                                             static_cast<size_t>(d)));
      std::copy(q.begin(), q.end(),
                c.bytes.begin() +
                    static_cast<ptrdiff_t>(cell * static_cast<size_t>(j) + row * static_cast<size_t>(h)));
    }
  }
  c.view.data = c.bytes.data();
  c.view.type = t;
  c.view.ne = {d, n_head_kv, n_kv, 1};
  c.view.nb = {dtype_info(t).type_size, row, cell, cell * static_cast<size_t>(n_kv)};
  return c;
}

// Token positions: the last `tokens` cells in order (a prompt or a decode step), or spread
// out, unsorted and with gaps (several sequences' worth of cells, a shifted context).
std::vector<int32_t> attention_positions(int64_t tokens, int64_t n_kv, bool scattered) {
  std::vector<int32_t> pos;
  std::mt19937 rng(static_cast<uint32_t>(tokens * 1000 + n_kv));
  std::uniform_int_distribution<int32_t> any(0, static_cast<int32_t>(n_kv - 1));
  for (int64_t t = 0; t < tokens; ++t)
    pos.push_back(scattered ? any(rng) : static_cast<int32_t>(n_kv - tokens + t));
  if (scattered) pos[0] = static_cast<int32_t>(n_kv - 1);  // the deepest cell is always used
  return pos;
}

// K with a larger spread than V, so the softmax is far from uniform.
struct KvCache {
  KvCache(DType t, int64_t d, int64_t n_head_kv, int64_t n_kv)
      : k(cache_tensor(t, d, n_head_kv, n_kv, 5000, 2.0f)),
        v(cache_tensor(t, d, n_head_kv, n_kv, 9000, 1.0f)) {}
  CacheTensor k, v;
};

void check_attention(Backend& cpu, Backend& ref, const KvCache& kv, int64_t group, int64_t tokens,
                     bool scattered) {
  const CacheTensor& k = kv.k;
  const CacheTensor& v = kv.v;
  const int64_t d = k.view.ne[0], n_head_kv = k.view.ne[1], n_kv = k.view.ne[2], n_head = n_head_kv * group;
  SCOPED_TRACE(std::string(dtype_name(k.view.type)) + " d=" + std::to_string(d) +
               " group=" + std::to_string(group) + " tokens=" + std::to_string(tokens) +
               " n_kv=" + std::to_string(n_kv) + (scattered ? " scattered positions" : ""));
  F32Tensor q = f32_tensor({d, n_head, tokens, 1}, 20, 3);
  const std::vector<int32_t> pos = attention_positions(tokens, n_kv, scattered);
  F32Tensor a = f32_tensor({d, n_head, tokens, 1}, 23, 1);
  F32Tensor b = f32_tensor({d, n_head, tokens, 1}, 24);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  eager::attention(cpu, q.view, k.view, v.view, pos, scale, a.view);
  eager::attention(ref, q.view, k.view, v.view, pos, scale, b.view);
  expect_close(a.view, b.view, 2e-5, "attention");
}

// Every cache type, head dims 64 and one that is not a whole number of 8-float vectors
// (block types: one block), 128 for F16 (32-cell tiles), group sizes 1 and 4, decode and
// batches, cell counts that are not a multiple of the tile, and at 300 cells few tokens
// split into chunks.
TEST_P(CpuOps, AttentionEveryCacheTypeAndShape) {
  for (DType t : {DType::kF32, DType::kF16, DType::kQ8_0, DType::kQ4_0}) {
    const int64_t odd_dim = dtype_info(t).block_size == 1 ? 20 : 32;
    for (int64_t d : {int64_t{64}, int64_t{128}, odd_dim}) {
      if (d == 128 && t != DType::kF16) continue;
      const KvCache kv(t, d, 2, 77);
      for (int64_t group : {1, 4}) {
        for (int64_t tokens : {1, 7, 37}) {
          check_attention(*cpu_, *ref_, kv, group, tokens, false);
          if (tokens > 1) check_attention(*cpu_, *ref_, kv, group, tokens, true);
        }
      }
      const KvCache deep(t, d, 2, 300);
      check_attention(*cpu_, *ref_, deep, 4, 1, false);
      check_attention(*cpu_, *ref_, deep, 4, 7, true);
    }
  }
}

TEST_P(CpuOps, AttentionLongPromptAndDeepDecode) {
  check_attention(*cpu_, *ref_, KvCache(DType::kF16, 64, 2, 100), 4, 100, false);
  check_attention(*cpu_, *ref_, KvCache(DType::kF16, 64, 2, 3000), 4, 1, false);
  check_attention(*cpu_, *ref_, KvCache(DType::kQ4_0, 128, 1, 700), 8, 3, true);
}

// Blocks and chunks follow from the shapes alone, so the thread count changes no bit.
TEST_P(CpuOps, AttentionResultsIndependentOfThreadCount) {
  Result<std::unique_ptr<Backend>> three = make_cpu_backend(3, GetParam().isa);
  ASSERT_TRUE(three.ok()) << three.status().to_string();
  for (auto [tokens, n_kv] : {std::pair<int64_t, int64_t>{1, 1000}, {5, 900}, {40, 200}}) {
    const int64_t d = 64, n_head_kv = 4, n_head = 16;
    F32Tensor q = f32_tensor({d, n_head, tokens, 1}, 30);
    const CacheTensor k = cache_tensor(DType::kF16, d, n_head_kv, n_kv, 100, 2.0f);
    const CacheTensor v = cache_tensor(DType::kF16, d, n_head_kv, n_kv, 200, 1.0f);
    const std::vector<int32_t> pos = attention_positions(tokens, n_kv, tokens == 5);
    std::vector<float> a(static_cast<size_t>(d * n_head * tokens)), b(a.size());
    const TensorView av = TensorView::contiguous(a.data(), DType::kF32, {d, n_head, tokens});
    const TensorView bv = TensorView::contiguous(b.data(), DType::kF32, {d, n_head, tokens});
    eager::attention(*cpu_, q.view, k.view, v.view, pos, 0.125f, av);
    eager::attention(*three.value(), q.view, k.view, v.view, pos, 0.125f, bv);
    EXPECT_EQ(a, b) << "tokens " << tokens << " n_kv " << n_kv;
  }
}

TEST_P(CpuOps, CopyConvertsBetweenFloatTypesThroughViews) {
  for (DType from : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (DType to : {DType::kF32, DType::kF16, DType::kBF16}) {
      // Rows of 19: two whole vectors and a tail on the dense path.
      F32Tensor src32 = f32_tensor({19, 5, 3, 1}, 30);
      std::vector<uint8_t> src_bytes(static_cast<size_t>(19 * 5 * 3 * 4));
      TensorView src = TensorView::contiguous(src_bytes.data(), from, {19, 5, 3});
      eager::copy(*ref_, src32.view, src);
      // The dense source, and a transposed view of it (dims 0 and 1 swapped).
      TensorView srct = src;
      std::swap(srct.ne[0], srct.ne[1]);
      std::swap(srct.nb[0], srct.nb[1]);
      for (const TensorView& from_view : {src, srct}) {
        std::vector<uint8_t> a_bytes(src_bytes.size()), b_bytes(src_bytes.size());
        const TensorView a =
            TensorView::contiguous(a_bytes.data(), to, {from_view.ne[0], from_view.ne[1], 3});
        const TensorView b =
            TensorView::contiguous(b_bytes.data(), to, {from_view.ne[0], from_view.ne[1], 3});
        eager::copy(*cpu_, from_view, a);
        eager::copy(*ref_, from_view, b);
        EXPECT_EQ(a_bytes, b_bytes) << dtype_name(from) << " -> " << dtype_name(to) << " rows of "
                                    << from_view.ne[0];
      }
    }
  }
}

TEST_P(CpuOps, SupportsWhatRefSupports) {
  for (size_t i = 0; i < kDTypeIdCount; ++i) {
    const std::optional<DType> t = dtype_from_id(static_cast<uint32_t>(i));
    if (!t) continue;
    for (Op op : {Op::kGetRows, Op::kMulMat, Op::kCopy, Op::kAttention}) {
      const DType types[] = {*t, DType::kF32};
      EXPECT_EQ(cpu_->supports(op, types), ref_->supports(op, types)) << op_name(op) << " " << dtype_name(*t);
    }
    // Attention's K/V position: the KV cache types.
    const DType kv[] = {DType::kF32, *t, *t};
    EXPECT_EQ(cpu_->supports(Op::kAttention, kv), ref_->supports(Op::kAttention, kv)) << dtype_name(*t);
  }
  for (DType t : {DType::kF32, DType::kF16, DType::kQ8_0, DType::kQ4_0}) {
    const DType kv[] = {DType::kF32, t, t};
    EXPECT_TRUE(cpu_->supports(Op::kAttention, kv)) << dtype_name(t);
  }
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    for (int threads : {1, 2}) out.push_back({isa, threads});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Paths, CpuOps, ::testing::ValuesIn(params()), param_name);

}  // namespace
}  // namespace paddock
