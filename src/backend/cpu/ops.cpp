// The row-wise ops: each splits the rows (ne[1..3] flattened) of its output across threads
// and computes a row as the ref backend does, so only the float summation order of the
// reductions can differ, and swiglu's exp on the SIMD paths (attention's vector exp,
// within 2 ulp of std::exp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/dot.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/vec_exp.h"
#include "backend/gelu.h"
#include "backend/rope_angles.h"
#include "base/check.h"
#include "base/fp16.h"

namespace paddock::cpu {

namespace {

int64_t n_rows(const TensorView& v) { return v.ne[1] * v.ne[2] * v.ne[3]; }

// Below this much work (elements x relative cost) an op runs on the calling thread: a decode
// step's norms, ropes and adds take a microsecond or two, less than handing work to a worker
// (and far less when the OS has given that worker's core to another process).
constexpr int64_t kInlineWork = 1 << 15;

// fn(begin, end, thread) over [0, rows), split across the pool unless the op is small.
template <typename F>
void for_rows(ThreadPool& pool, int64_t rows, int64_t work, F&& fn) {
  if (work < kInlineWork) {
    if (rows > 0) fn(0, rows, 0);
    return;
  }
  pool.parallel_for(rows, fn);
}

// Row r of v, rows numbered i1 fastest.
uint8_t* nth_row(const TensorView& v, int64_t r) {
  return v.row(r % v.ne[1], (r / v.ne[1]) % v.ne[2], r / (v.ne[1] * v.ne[2]));
}

// a op b with b repeated where it is smaller (ggml_can_repeat); dst may be a.
template <typename F>
void binary(ThreadPool& pool, const TensorView& a, const TensorView& b, const TensorView& dst, F f) {
  PADDOCK_CHECK(a.type == DType::kF32 && b.type == DType::kF32 && dst.type == DType::kF32);
  PADDOCK_CHECK(a.same_shape(dst));
  for (int d = 0; d < 4; ++d) PADDOCK_CHECK(b.ne[d] > 0 && a.ne[d] % b.ne[d] == 0);
  const bool dense = a.nb[0] == sizeof(float) && b.nb[0] == sizeof(float) && dst.nb[0] == sizeof(float) &&
                     b.ne[0] == a.ne[0];
  for_rows(pool, n_rows(a), a.n_elements(), [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i1 = r % a.ne[1];
      const int64_t i2 = (r / a.ne[1]) % a.ne[2];
      const int64_t i3 = r / (a.ne[1] * a.ne[2]);
      const uint8_t* pa = a.row(i1, i2, i3);
      const uint8_t* pb = b.row(i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]);
      uint8_t* pd = dst.row(i1, i2, i3);
      if (dense) {
        const float* fa = reinterpret_cast<const float*>(pa);
        const float* fb = reinterpret_cast<const float*>(pb);
        float* fd = reinterpret_cast<float*>(pd);
        for (int64_t i = 0; i < a.ne[0]; ++i) fd[i] = f(fa[i], fb[i]);
      } else {
        for (int64_t i = 0; i < a.ne[0]; ++i) {
          const float va = *reinterpret_cast<const float*>(pa + i * a.nb[0]);
          const float vb = *reinterpret_cast<const float*>(pb + (i % b.ne[0]) * b.nb[0]);
          *reinterpret_cast<float*>(pd + i * dst.nb[0]) = f(va, vb);
        }
      }
    }
  });
}

float load(DType t, const uint8_t* p) {
  uint16_t h;
  switch (t) {
    case DType::kF32: return *reinterpret_cast<const float*>(p);
    case DType::kF16: std::memcpy(&h, p, 2); return fp16_to_f32(h);
    case DType::kBF16: std::memcpy(&h, p, 2); return bf16_to_f32(h);
    default: PADDOCK_CHECK_MSG(false, "copy supports F32, F16 and BF16");
  }
  return 0;
}

void store(DType t, uint8_t* p, float x) {
  uint16_t h;
  switch (t) {
    case DType::kF32: *reinterpret_cast<float*>(p) = x; return;
    case DType::kF16:
      h = f32_to_fp16(x);
      std::memcpy(p, &h, 2);
      return;
    case DType::kBF16:
      h = f32_to_bf16(x);
      std::memcpy(p, &h, 2);
      return;
    default: PADDOCK_CHECK_MSG(false, "copy supports F32, F16 and BF16");
  }
}

}  // namespace

void mul(ThreadPool& pool, const TensorView& a, const TensorView& b, const TensorView& dst) {
  binary(pool, a, b, dst, [](float x, float y) { return x * y; });
}

void add(ThreadPool& pool, const TensorView& a, const TensorView& b, const TensorView& dst) {
  binary(pool, a, b, dst, [](float x, float y) { return x + y; });
}

namespace {

// srcs and dst: F32 tensors of one shape with unit-stride rows.
template <size_t N>
void check_rows(const std::array<const TensorView*, N>& srcs, const TensorView& dst) {
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.nb[0] == sizeof(float));
  for (const TensorView* v : srcs) {
    PADDOCK_CHECK(v->type == DType::kF32 && v->nb[0] == sizeof(float) && v->same_shape(dst));
  }
}

// fn(in, out) over each row of dst, `in` the same row of each of srcs (check_rows). cost: work
// per element relative to an add.
template <size_t N, typename F>
void each_row(ThreadPool& pool, const std::array<const TensorView*, N>& srcs, const TensorView& dst,
              int64_t cost, F&& fn) {
  check_rows(srcs, dst);
  for_rows(pool, n_rows(dst), cost * dst.n_elements(), [&](int64_t begin, int64_t end, int) {
    std::array<const float*, N> in;
    for (int64_t r = begin; r < end; ++r) {
      for (size_t k = 0; k < N; ++k) in[k] = reinterpret_cast<const float*>(nth_row(*srcs[k], r));
      fn(in, reinterpret_cast<float*>(nth_row(dst, r)));
    }
  });
}

// fn(in, out, len) over pieces of dst's rows, `in` the same piece of each of srcs, for ops
// whose output element i needs only element i of each input. With fewer rows than threads
// each row is cut into one piece per thread (at cache-line bounds): decode's single row
// (gemma2's 256000 soft-capped logits, a 9216-wide GEGLU) ran on one core while the others
// waited.
template <size_t N, typename F>
void each_piece(ThreadPool& pool, const std::array<const TensorView*, N>& srcs, const TensorView& dst,
                int64_t cost, F&& fn) {
  check_rows(srcs, dst);
  constexpr int64_t kLine = 64 / sizeof(float);
  const int64_t n = dst.ne[0];
  const int64_t rows = n_rows(dst);
  const int64_t pieces = rows < pool.size() ? pool.size() : 1;
  const auto bound = [&](int64_t p) { return p == pieces ? n : n * p / pieces / kLine * kLine; };
  for_rows(pool, rows * pieces, cost * dst.n_elements(), [&](int64_t begin, int64_t end, int) {
    std::array<const float*, N> in;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r = item / pieces;
      const int64_t b = bound(item % pieces);
      const int64_t e = bound(item % pieces + 1);
      if (b >= e) continue;
      for (size_t k = 0; k < N; ++k) in[k] = reinterpret_cast<const float*>(nth_row(*srcs[k], r)) + b;
      fn(in, reinterpret_cast<float*>(nth_row(dst, r)) + b, e - b);
    }
  });
}

// Sum of f(x[i]) in double, over eight partial sums: one chain of dependent double adds took
// 3 us per decode call.
template <typename F>
double row_sum(const float* x, int64_t n, F f) {
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) part[k] += static_cast<double>(f(x[i + k]));
  }
  double sum = 0;
  for (; i < n; ++i) sum += static_cast<double>(f(x[i]));
  for (double p : part) sum += p;
  return sum;
}

// gelu_ggml's table, built once: a lookup instead of a tanh each.
float gelu_lookup(float x) {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < t.size(); ++h) t[h] = gelu_of_f16(static_cast<uint16_t>(h));
    return t;
  }();
  return x <= -10.0f ? 0.0f : x >= 10.0f ? x : table[f32_to_fp16(x)];
}

}  // namespace

void rms_norm(ThreadPool& pool, const TensorView& x, float eps, const TensorView& dst) {
  const int64_t n = x.ne[0];
  each_row<1>(pool, {&x}, dst, 1, [&](const std::array<const float*, 1>& in, float* out) {
    const float mean =
        static_cast<float>(row_sum(in[0], n, [](float v) { return v * v; }) / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t j = 0; j < n; ++j) out[j] = in[0][j] * scale;
  });
}

void norm(ThreadPool& pool, const TensorView& x, float eps, const TensorView& dst) {
  const int64_t n = x.ne[0];
  each_row<1>(pool, {&x}, dst, 2, [&](const std::array<const float*, 1>& in, float* out) {
    const auto mean =
        static_cast<float>(row_sum(in[0], n, [](float v) { return v; }) / static_cast<double>(n));
    const double var =
        row_sum(in[0], n, [mean](float v) { return (v - mean) * (v - mean); }) / static_cast<double>(n);
    const float scale = 1.0f / std::sqrt(static_cast<float>(var) + eps);
    for (int64_t j = 0; j < n; ++j) out[j] = (in[0][j] - mean) * scale;
  });
}

void swiglu_oai(ThreadPool& pool, CpuIsa isa, const TensorView& gate, const TensorView& up, float alpha,
                float limit, const TensorView& dst) {
  const ExpFn vexp = isa == CpuIsa::kScalar ? nullptr : exp_avx2_kernel();
  each_piece<2>(pool, {&gate, &up}, dst, 10,
                [&](const std::array<const float*, 2>& in, float* out, int64_t n) {
                  constexpr int64_t kBlock = 256;
                  float e[kBlock];
                  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
                    const int64_t len = std::min(kBlock, n - i0);
                    for (int64_t i = 0; i < len; ++i) e[i] = alpha * -std::min(in[0][i0 + i], limit);
                    if (vexp != nullptr) {
                      vexp(e, e, len);
                    } else {
                      for (int64_t i = 0; i < len; ++i) e[i] = std::exp(e[i]);
                    }
                    for (int64_t i = 0; i < len; ++i) {
                      const float x = std::min(in[0][i0 + i], limit);
                      out[i0 + i] = x / (1.0f + e[i]) * (std::clamp(in[1][i0 + i], -limit, limit) + 1.0f);
                    }
                  }
                });
}

void swiglu(ThreadPool& pool, CpuIsa isa, const TensorView& gate, const TensorView& up,
            const TensorView& dst) {
  // exp is most of the op (a scalar std::exp took 2-4% of a prompt's time): SIMD paths take
  // e^-g a block at a time from the vector exp.
  const ExpFn vexp = isa == CpuIsa::kScalar ? nullptr : exp_avx2_kernel();
  each_piece<2>(pool, {&gate, &up}, dst, 10,
                [&](const std::array<const float*, 2>& in, float* out, int64_t n) {
                  const float* g = in[0];
                  const float* u = in[1];
                  if (vexp == nullptr) {
                    for (int64_t i = 0; i < n; ++i) out[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
                    return;
                  }
                  constexpr int64_t kBlock = 256;
                  float e[kBlock];
                  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
                    const int64_t len = std::min(kBlock, n - i0);
                    for (int64_t i = 0; i < len; ++i) e[i] = -g[i0 + i];
                    vexp(e, e, len);
                    for (int64_t i = 0; i < len; ++i) out[i0 + i] = g[i0 + i] / (1.0f + e[i]) * u[i0 + i];
                  }
                });
}

void geglu(ThreadPool& pool, const TensorView& gate, const TensorView& up, const TensorView& dst) {
  each_piece<2>(pool, {&gate, &up}, dst, 4,
                [&](const std::array<const float*, 2>& in, float* out, int64_t n) {
                  for (int64_t i = 0; i < n; ++i) out[i] = gelu_lookup(in[0][i]) * in[1][i];
                });
}

void gelu(ThreadPool& pool, const TensorView& x, const TensorView& dst) {
  each_piece<1>(pool, {&x}, dst, 4, [&](const std::array<const float*, 1>& in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = gelu_lookup(in[0][i]);
  });
}

void tanh(ThreadPool& pool, const TensorView& x, const TensorView& dst) {
  each_piece<1>(pool, {&x}, dst, 4, [&](const std::array<const float*, 1>& in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(in[0][i]);
  });
}

void scale(ThreadPool& pool, const TensorView& x, float s, const TensorView& dst) {
  each_piece<1>(pool, {&x}, dst, 1, [&](const std::array<const float*, 1>& in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[0][i] * s;
  });
}

void rope(ThreadPool& pool, const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
          const TensorView& dst) {
  PADDOCK_CHECK(x.type == DType::kF32 && dst.type == DType::kF32 && x.same_shape(dst));
  PADDOCK_CHECK(x.ne[3] == 1 && x.ne[2] == static_cast<int64_t>(pos.size()));
  PADDOCK_CHECK(p.n_dims > 0 && p.n_dims % 2 == 0 && p.n_dims <= x.ne[0]);
  PADDOCK_CHECK(p.freq_factors.empty() || static_cast<int64_t>(p.freq_factors.size()) >= p.n_dims / 2);
  const int64_t half = p.n_dims / 2;
  const int64_t n_head = x.ne[1];
  // Rows are (head, token) pairs; a thread rebuilds its angle cache when the token changes.
  for_rows(pool, n_head * x.ne[2], x.n_elements(), [&](int64_t begin, int64_t end, int) {
    std::vector<float> cs(static_cast<size_t>(p.n_dims));  // (cos, sin) per pair
    int64_t cached_t = -1;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t h = r % n_head;
      const int64_t t = r / n_head;
      if (t != cached_t) {
        rope_angles(pos[t], p, cs.data());
        cached_t = t;
      }
      for (int64_t i = 0; i < half; ++i) {
        const int64_t i0 = p.mode == RopeMode::kNormal ? 2 * i : i;
        const int64_t i1 = p.mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
        const float x0 = x.f32(i0, h, t);
        const float x1 = x.f32(i1, h, t);
        const float c = cs[static_cast<size_t>(2 * i)], s = cs[static_cast<size_t>(2 * i + 1)];
        dst.f32(i0, h, t) = x0 * c - x1 * s;
        dst.f32(i1, h, t) = x0 * s + x1 * c;
      }
      for (int64_t i = p.n_dims; i < x.ne[0]; ++i) dst.f32(i, h, t) = x.f32(i, h, t);
    }
  });
}

void copy(ThreadPool& pool, CpuIsa isa, const TensorView& src, const TensorView& dst) {
  auto is_float = [](DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; };
  PADDOCK_CHECK_MSG(is_float(src.type) && is_float(dst.type), "copy supports F32, F16 and BF16");
  PADDOCK_CHECK(src.same_shape(dst));
  const bool dense =
      src.nb[0] == dtype_info(src.type).type_size && dst.nb[0] == dtype_info(dst.type).type_size;
  // A decode step's K/V rows into an F16 cache: a vector conversion, not one call per element.
  const FloatToHalfFn to_half =
      dense && src.type == DType::kF32 && dst.type == DType::kF16 ? float_to_half_kernel(isa) : nullptr;
  const HalfToFloatFn to_float =
      dense && src.type == DType::kF16 && dst.type == DType::kF32 ? half_to_float_kernel(isa) : nullptr;
  for_rows(pool, n_rows(src), src.n_elements(), [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* s = nth_row(src, r);
      uint8_t* d = nth_row(dst, r);
      if (dense && src.type == dst.type) {
        std::memcpy(d, s, static_cast<size_t>(src.ne[0]) * src.nb[0]);
      } else if (to_half != nullptr) {
        to_half(reinterpret_cast<const float*>(s), reinterpret_cast<uint16_t*>(d), src.ne[0]);
      } else if (to_float != nullptr) {
        to_float(reinterpret_cast<const uint16_t*>(s), reinterpret_cast<float*>(d), src.ne[0]);
      } else {
        for (int64_t i = 0; i < src.ne[0]; ++i)
          store(dst.type, d + i * dst.nb[0], load(src.type, s + i * src.nb[0]));
      }
    }
  });
}

}  // namespace paddock::cpu
