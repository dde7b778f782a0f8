// Every op of backend.h on every backend against the ref backend, the shape of llama.cpp's
// test-backend-ops: make_cases() sweeps each op x every input type ref runs it with x odd
// sizes (1, 7, 33, 1025) x views (padded strides, permuted and transposed dims) x
// broadcasting, and each case runs on ref and on every entry of backends_under_test().
// Inputs and outputs live in the backend's own device buffers and move only through Buffer
// set/get; weights are adopted and prepared as a model's are (model/weights.cpp), so a GPU
// backend runs the same cases and a new backend is one more entry in backends_under_test().
// Results are held to ref's by normalized mean squared error (mul_mat: by a fraction of
// sum |w x| per output); host backends also element by element (bit for bit where the op has
// no reduction), and their mul_mat to quantized_dot, which quantizes activations as they do.
// Bytes outside an output's view and every input must come back unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#if PADDOCK_HAVE_VULKAN
#include "backend/vulkan/vulkan_backend.h"
#include "base/env.h"
#include "base/fp16.h"
#endif
#include "backend/graph.h"
#include "backend/moe.h"
#include "backend/ref/kernels.h"
#include "backend/ref/ref_backend.h"
#include "quant/quant.h"
#include "quant/test_data.h"

namespace paddock {
namespace {

// How closely a backend must follow ref: every backend within each case's NMSE bound (as
// test-backend-ops holds its backends; mul_mat: within a fraction of sum |w x|); host
// backends, which share ref's formulas and libm, also element by element.
// kQuantizedDot: kNmse, and mul_mat also within 2e-5 x sum|w x| of quantized_dot, as host
// backends are (a GPU kernel that quantizes activations as the CPU does).
enum class Precision { kNmse, kElementwise, kQuantizedDot };

struct BackendUnderTest {
  // Names the tests: letters, digits and '_'.
  std::string name;
  // An error (a path this CPU lacks, no device) skips the backend's tests loudly.
  std::function<Result<std::unique_ptr<Backend>>()> make;
  Precision precision;
  // A case ref runs that this backend does not support fails the test (else it is listed).
  bool covers_ref;
  // Failing to make it fails the tests (a device named by PADDOCK_VULKAN_DEVICE) instead of
  // skipping them.
  bool required = false;
  // The ops whose kernels differ from an entry before it (none: every op).
  std::vector<Op> ops = {};
};

// The backends held to ref: each ISA path of the cpu backend, forced scalar included, with 1
// and 2 threads. A new backend is one more entry here.
std::vector<BackendUnderTest> backends_under_test() {
  std::vector<BackendUnderTest> out;
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    for (int threads : {1, 2}) {
      out.push_back({"cpu_" + std::string(cpu_isa_name(isa)) + "_t" + std::to_string(threads),
                     [=] { return make_cpu_backend(threads, isa); }, Precision::kElementwise, true});
    }
  }
#if PADDOCK_HAVE_VULKAN
  // The device PADDOCK_VULKAN_DEVICE names (ctest names lavapipe), else the first GPU.
  // On a CPU device, also as it shapes work for a GPU (many invocations per row).
  // Decode's products with integer dot products (which lavapipe has, unaccelerated), beside
  // the float ones the GPU tuning gives where the driver does not accelerate them.
  const bool named = env_get("VULKAN_DEVICE").has_value();
  out.push_back({"vulkan", [] { return make_vulkan_backend("", {.gpu = false, .int_dot = false}); },
                 Precision::kNmse, false, named});
  out.push_back({"vulkan_gpu_tuned", [] { return make_vulkan_backend("", {.gpu = true, .int_dot = false}); },
                 Precision::kNmse, false, named});
  out.push_back({"vulkan_gpu_int_dot",
                 [] { return make_vulkan_backend("", {.gpu = true, .int_dot = true}); },
                 Precision::kQuantizedDot,
                 false,
                 named,
                 {Op::kMulMat, Op::kMulMatId}});
#endif
  return out;
}

// ---- Tensors of a case and where their bytes lie ----

enum class Layout : uint8_t {
  kDense,
  kPadded,      // each dim's stride one unit (block, row, plane) longer than packed
  kPermuted,    // dims 1 and 2 swapped in memory, as ggml_permute leaves heads and tokens
  kTransposed,  // dims 0 and 1 swapped in memory: a row's elements are strided
};
constexpr std::string_view kLayoutNames[] = {"dense", "padded", "permuted", "transposed"};

struct Spec {
  DType type = DType::kF32;
  std::array<int64_t, 4> ne{1, 1, 1, 1};
  Layout layout = Layout::kDense;
  bool weight = false;        // bytes the backend adopts, as a model file's
  float sigma = 1.0f;         // of the Gaussian values it holds
  std::vector<float> values;  // instead of Gaussian ones
};

int64_t block(DType t) { return dtype_info(t).block_size; }
int64_t n_elements(const Spec& s) { return s.ne[0] * s.ne[1] * s.ne[2] * s.ne[3]; }

std::array<size_t, 4> strides(const Spec& s) {
  const size_t unit = dtype_info(s.type).type_size;
  const size_t row = dtype_row_bytes(s.type, s.ne[0]);
  const auto n = [&](int d) { return static_cast<size_t>(s.ne[d]); };
  switch (s.layout) {
    case Layout::kDense: return {unit, row, row * n(1), row * n(1) * n(2)};
    case Layout::kPadded: {
      const size_t nb1 = row + unit;
      const size_t nb2 = nb1 * (n(1) + 1);
      return {unit, nb1, nb2, nb2 * (n(2) + 1)};
    }
    case Layout::kPermuted: return {unit, row * n(2), row, row * n(1) * n(2)};
    case Layout::kTransposed: return {unit * n(1), unit, unit * n(0) * n(1), unit * n(0) * n(1) * n(2)};
  }
  return {};
}

size_t storage_bytes(const Spec& s) { return strides(s)[3] * static_cast<size_t>(s.ne[3]); }

// fn(storage offset, dense offset, bytes) for each run of bytes the view holds: whole rows,
// or single elements where a row's elements are strided. Dense order: ne[0] fastest.
template <typename F>
void for_each_run(const Spec& s, F fn) {
  const std::array<size_t, 4> nb = strides(s);
  const size_t unit = dtype_info(s.type).type_size;
  const size_t row = dtype_row_bytes(s.type, s.ne[0]);
  size_t dense = 0;
  for (int64_t i3 = 0; i3 < s.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < s.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < s.ne[1]; ++i1) {
        const size_t at = i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
        if (nb[0] == unit) {
          fn(at, dense, row);
          dense += row;
          continue;
        }
        for (int64_t i0 = 0; i0 < s.ne[0] / block(s.type); ++i0, dense += unit) {
          fn(at + i0 * nb[0], dense, unit);
        }
      }
    }
  }
}

// The view's dense bytes written over `storage`, whose other bytes stay.
std::vector<uint8_t> scatter(const Spec& s, std::span<const uint8_t> dense, std::vector<uint8_t> storage) {
  for_each_run(s, [&](size_t at, size_t d, size_t n) { std::copy_n(&dense[d], n, &storage[at]); });
  return storage;
}

std::vector<uint8_t> gather(const Spec& s, std::span<const uint8_t> storage) {
  std::vector<uint8_t> dense(dtype_row_bytes(s.type, s.ne[0]) *
                             static_cast<size_t>(s.ne[1] * s.ne[2] * s.ne[3]));
  for_each_run(s, [&](size_t at, size_t d, size_t n) { std::copy_n(&storage[at], n, &dense[d]); });
  return dense;
}

// Bytes around views start as 0xFF: NaN in every float type, so an element a kernel forgets
// to write, or padding it reads, shows in its results.
std::vector<uint8_t> unwritten(const Spec& s) { return std::vector<uint8_t>(storage_bytes(s), 0xFF); }

// n Gaussian values: a prefix of one sequence per seed, so every shape shares it.
std::span<const float> gaussian(size_t n, uint32_t seed) {
  static std::map<uint32_t, std::vector<float>> sequences;
  std::vector<float>& v = sequences[seed];
  if (v.size() < n) v = quant_test::gaussian_row(std::max(n, 2 * v.size()), seed);
  return std::span<const float>(v).first(n);
}

// Dense bytes of s: its values, or Gaussian ones quantized to s.type. Memoized, since
// quantizing (K-quants search their scales) would otherwise be most of the run.
std::vector<uint8_t> dense_bytes(const Spec& s, uint32_t seed) {
  if (!s.values.empty()) return quantize(s.type, s.values);
  static std::map<std::tuple<DType, int64_t, uint32_t, float>, std::vector<uint8_t>> memo;
  const int64_t n = n_elements(s);
  auto [it, fresh] = memo.try_emplace({s.type, n, seed, s.sigma});
  if (fresh) {
    const std::span<const float> g = gaussian(static_cast<size_t>(n), seed);
    std::vector<float> v(g.size());
    std::transform(g.begin(), g.end(), v.begin(), [&](float x) { return s.sigma * x; });
    it->second = quantize(s.type, v);
  }
  return it->second;
}

// ---- Cases ----

struct Tolerance {
  double max_nmse = 1e-7;  // every backend (test-backend-ops' default)
  bool bitwise = false;    // host backends: ref's bytes exactly (ops without reductions)
  double rel = 0;          // host backends: |got - ref| <= rel * max(1, |ref|)
};

struct Case {
  Op op = Op::kCount;
  std::vector<Spec> src;
  Spec dst;
  bool in_place = false;  // dst is src[0] (mul, add)
  std::vector<int32_t> ids;
  float scalar = 0;
  float scalar2 = 0;
  RopeParams rope;             // frequency factors, when present, are src[1]
  AttnParams attn;             // sinks, when present, are src[3]
  std::vector<int32_t> cells;  // attention's tagged cells (attn.cells points here when run)
  std::vector<AttnSeq> seqs;   // attention's sequences (attn.seqs points here when run)
  MoeParams moe;               // moe_gate; mul_mat_id: moe.k
  Tolerance tol;
  std::string note;  // what the tensors do not show

  std::vector<DType> types() const {
    std::vector<DType> t;
    for (const Spec& s : src) t.push_back(s.type);
    return t;
  }
  std::string name() const;
};

std::string spec_name(const Spec& s) {
  int dims = 4;
  while (dims > 1 && s.ne[dims - 1] == 1) --dims;
  std::string out = std::string(dtype_name(s.type)) + "[";
  for (int d = 0; d < dims; ++d) out += (d ? "," : "") + std::to_string(s.ne[d]);
  out += "]";
  if (s.layout != Layout::kDense) out += " " + std::string(kLayoutNames[static_cast<int>(s.layout)]);
  return out;
}

std::string Case::name() const {
  std::string out = std::string(op_name(op)) + "(";
  for (size_t i = 0; i < src.size(); ++i) out += (i ? ", " : "") + spec_name(src[i]);
  out += " -> " + (in_place ? std::string("in place") : spec_name(dst));
  return out + (note.empty() ? "" : "; " + note) + ")";
}

constexpr int64_t kSizes[] = {1, 7, 33, 1025};

struct Views {
  Layout src, dst;
};
// Views of ops that need whole rows (nb[0] = the element size).
constexpr Views kRowViews[] = {{Layout::kDense, Layout::kDense},
                               {Layout::kPadded, Layout::kPadded},
                               {Layout::kPermuted, Layout::kDense}};

// Row lengths of 1, 7, 33 and 1025 elements, in blocks for block types, short of 1025
// blocks of 256 (a quarter million values to quantize per row that show nothing 33 blocks do
// not).
std::vector<int64_t> row_lengths(DType t) {
  std::vector<int64_t> out;
  for (int64_t n : kSizes) {
    if (n * block(t) <= 1025 * 32) out.push_back(n * block(t));
  }
  return out;
}

// Every row length, dense and padded, with repeated ids; a table of 1025 rows.
std::vector<Case> get_rows_cases(DType t) {
  std::vector<Case> out;
  const auto add = [&](int64_t n, int64_t rows, std::vector<int32_t> ids, Layout l) {
    const int64_t n_ids = static_cast<int64_t>(ids.size());
    out.push_back({.op = Op::kGetRows,
                   .src = {{.type = t, .ne = {n, rows, 1, 1}, .layout = l, .weight = true}},
                   .dst = {.ne = {n, n_ids, 1, 1}, .layout = l},
                   .ids = std::move(ids),
                   .tol = {.bitwise = true}});
  };
  for (int64_t n : row_lengths(t)) add(n, 7, {6, 0, 3, 3, 1}, Layout::kDense);
  add(7 * block(t), 7, {6, 0, 3, 3, 1}, Layout::kPadded);
  add(block(t), 1025, {1024, 0, 513, 1024, 7}, Layout::kDense);
  return out;
}

// mul_mat's outputs may be near 0 by cancellation, so its error is measured against
// sum |w x| instead of NMSE: activation quantization (to the weight type's vec_dot_type)
// moves a dot by up to this fraction of it; types without a dot are dotted in F32.
Tolerance mul_mat_tolerance(DType t) {
  const QuantOps* q = quant_ops(t);
  switch (q->vec_dot == nullptr ? DType::kF32 : q->vec_dot_type) {
    case DType::kF32: return {.rel = 1e-5};
    case DType::kF16: return {.rel = 2e-3};
    case DType::kBF16: return {.rel = 1e-2};
    default: return {.rel = 2e-2};
  }
}

// Rows of 1 and 7 blocks x row counts that are and are not whole 8-row groups (interleaved
// weights on the cpu paths) x 1 to 17 columns; rows of 33 blocks (and 1025 floats) for
// decode and a few columns; padded, permuted and batched views and a transposed output; 67
// columns (past one 64-column block); 1024 and 1025 rows.
std::vector<Case> mul_mat_cases(DType t) {
  std::vector<Case> out;
  const auto add = [&](int64_t k, int64_t m, std::array<int64_t, 4> x, Layout w, Layout xl, Layout d) {
    x[0] = k;
    out.push_back(
        {.op = Op::kMulMat,
         .src = {{.type = t, .ne = {k, m, 1, 1}, .layout = w, .weight = true}, {.ne = x, .layout = xl}},
         .dst = {.ne = {m, x[1], x[2], 1}, .layout = d},
         .tol = mul_mat_tolerance(t)});
  };
  constexpr Layout kD = Layout::kDense;
  const int64_t bs = block(t);
  for (int64_t k : {bs, 7 * bs}) {
    for (int64_t m : {1, 7, 33, 40}) {
      for (int64_t n : {1, 3, 17}) add(k, m, {0, n, 1, 1}, kD, kD, kD);
    }
  }
  std::vector<int64_t> long_rows = {33 * bs};
  if (bs == 1) long_rows.push_back(1025);
  for (int64_t k : long_rows) {
    for (int64_t m : {7, 40}) {
      for (int64_t n : {1, 5}) add(k, m, {0, n, 1, 1}, kD, kD, kD);
    }
  }
  const int64_t k = bs == 1 ? 67 : 2 * bs;
  add(k, 40, {0, 3, 2, 1}, Layout::kPadded, Layout::kPadded, Layout::kPadded);
  add(k, 40, {0, 3, 2, 1}, kD, Layout::kPermuted, Layout::kPadded);
  add(k, 40, {0, 3, 2, 1}, kD, Layout::kPadded, kD);
  add(k, 40, {0, 5, 1, 1}, kD, kD, Layout::kTransposed);
  add(k, 40, {0, 67, 1, 1}, kD, kD, kD);
  for (int64_t m : {1024, 1025}) {
    for (int64_t n : {1, 5}) add(std::max<int64_t>(bs, 32), m, {0, n, 1, 1}, kD, kD, kD);
  }
  return out;
}

// [n, 7, 3, 2]: 42 rows, so 1025 columns are enough work to be split across threads.
// RMS norm and LayerNorm's normalisation (NORM).
std::vector<Case> norm_cases(Op op, DType t) {
  std::vector<Case> out;
  for (int64_t n : kSizes) {
    for (Views v : kRowViews) {
      out.push_back({.op = op,
                     .src = {{.type = t, .ne = {n * block(t), 7, 3, 2}, .layout = v.src}},
                     .dst = {.ne = {n * block(t), 7, 3, 2}, .layout = v.dst},
                     .scalar = 1e-5f,
                     .tol = {.rel = 1e-6}});
    }
  }
  return out;
}

// SwiGLU and GEGLU: gate(src0) * src1. GELU's inputs spread past +-10 (where it stops
// reading its table) and over its curve; its host kernels read ref's table, bit for bit.
std::vector<Case> glu_cases(Op op, DType t) {
  const bool gelu = op == Op::kGeglu;
  std::vector<Case> out;
  for (int64_t n : kSizes) {
    for (Views v : kRowViews) {
      const Spec gate{.type = t, .ne = {n * block(t), 7, 3, 2}, .layout = v.src, .sigma = gelu ? 6.0f : 1.0f};
      const Spec up{.type = t, .ne = gate.ne, .layout = v.src};
      out.push_back({.op = op,
                     .src = {gate, up},
                     .dst = {.ne = gate.ne, .layout = v.dst},
                     .tol = gelu ? Tolerance{.bitwise = true} : Tolerance{.rel = 1e-6}});
    }
  }
  return out;
}

// gpt-oss's clamped SwiGLU, inputs spread past the clamp (limit 7).
std::vector<Case> swiglu_oai_cases(DType t) {
  std::vector<Case> out;
  for (int64_t n : kSizes) {
    for (Views v : kRowViews) {
      const Spec gate{.type = t, .ne = {n * block(t), 7, 3, 2}, .layout = v.src, .sigma = 8.0f};
      const Spec up{.type = t, .ne = gate.ne, .layout = v.src, .sigma = 8.0f};
      out.push_back({.op = Op::kSwigluOai,
                     .src = {gate, up},
                     .dst = {.ne = gate.ne, .layout = v.dst},
                     .scalar = 1.702f,
                     .scalar2 = 7.0f,
                     .tol = {.rel = 1e-6}});
    }
  }
  return out;
}

// SCALE, GELU and TANH (GELU's and TANH's inputs spread as GEGLU's gate's, past tanh's
// saturation).
std::vector<Case> unary_cases(Op op, DType t) {
  std::vector<Case> out;
  for (int64_t n : kSizes) {
    for (Views v : kRowViews) {
      const Spec x{
          .type = t, .ne = {n * block(t), 7, 3, 2}, .layout = v.src, .sigma = op == Op::kScale ? 1.0f : 6.0f};
      out.push_back({.op = op,
                     .src = {x},
                     .dst = {.ne = x.ne, .layout = v.dst},
                     .scalar = 16.0f,
                     .tol = {.bitwise = true}});
    }
  }
  return out;
}

// a [n, 9, 3, 2] with b repeated along dims 0..3 singly and together, in every view (the
// inputs and the output alike), out of place and in place.
std::vector<Case> binary_cases(Op op, DType t) {
  std::vector<Case> out;
  for (int64_t blocks : kSizes) {
    const int64_t n = blocks * block(t);
    const int64_t b0 = block(t);
    const std::array<int64_t, 4> a = {n, 9, 3, 2};
    for (std::array<int64_t, 4> b :
         {a, {n, 1, 1, 1}, {b0, 9, 1, 1}, {n, 3, 3, 1}, {n, 9, 1, 2}, {n, 1, 3, 2}, {b0, 1, 1, 1}}) {
      for (Layout l : {Layout::kDense, Layout::kPadded, Layout::kPermuted, Layout::kTransposed}) {
        if (l == Layout::kTransposed && block(t) > 1) continue;
        for (bool in_place : {false, true}) {
          out.push_back({.op = op,
                         .src = {{.type = t, .ne = a, .layout = l}, {.type = t, .ne = b, .layout = l}},
                         .dst = {.ne = a, .layout = l},
                         .in_place = in_place,
                         .tol = {.bitwise = true}});
        }
      }
    }
  }
  return out;
}

// Both modes, every dim rotated (with frequency factors) or only some, 1 to 1025 tokens at
// far apart positions; and a whole 128-dim head at the default base.
std::vector<Case> rope_cases(DType t) {
  std::vector<Case> out;
  const std::vector<float> factors = {1.0f, 1.5f, 2.0f, 4.0f, 8.0f, 1.0f, 3.0f, 2.5f};
  const auto add = [&](RopeParams p, int64_t head, int64_t tokens, Views v) {
    std::vector<int32_t> pos;
    for (int64_t i = 0; i < tokens; ++i) pos.push_back(static_cast<int32_t>(5 + 37 * i));
    Case c{.op = Op::kRope,
           .src = {{.type = t, .ne = {head, 5, tokens, 1}, .layout = v.src}},
           .dst = {.ne = {head, 5, tokens, 1}, .layout = v.dst},
           .ids = std::move(pos),
           .rope = p,
           .tol = {.bitwise = true},
           .note = std::string(p.mode == RopeMode::kNormal ? "normal" : "neox") +
                   " n_dims=" + std::to_string(p.n_dims)};
    if (p.n_dims == 16) {
      c.src.push_back({.ne = {8, 1, 1, 1}, .values = factors});
      c.note += " freq factors";
    }
    out.push_back(std::move(c));
  };
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    for (int32_t n_dims : {16, 10}) {
      for (int64_t tokens : kSizes) {
        for (Views v : kRowViews) {
          add({.mode = mode, .n_dims = n_dims, .freq_base = 500000.0f, .freq_scale = 0.5f}, 16, tokens, v);
        }
      }
    }
    add({.mode = mode, .n_dims = 128}, 128, 7, kRowViews[0]);
    // YaRN as gpt-oss sets it (factor 32 over a 4096-token original context), and with
    // an attention factor of its own.
    for (float attn_factor : {1.0f, 0.75f}) {
      for (int64_t tokens : {int64_t{1}, int64_t{33}}) {
        add({.mode = mode,
             .n_dims = 64,
             .freq_base = 150000.0f,
             .freq_scale = 1.0f / 32,
             .ext_factor = 1.0f,
             .attn_factor = attn_factor,
             .n_ctx_orig = 4096},
            64, tokens, kRowViews[0]);
        out.back().note += " yarn attn_factor=" + std::to_string(attn_factor);
      }
    }
  }
  return out;
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

struct AttentionShape {
  int64_t d_k, d_v, n_head_kv, n_kv, group, tokens;
  bool scattered;
};
struct AttentionViews {
  Layout q, kv, dst;
};

// K with a larger spread than V, so the softmax is far from uniform.
Case attention_case(DType t, const AttentionShape& s, const AttentionViews& v) {
  const int64_t n_head = s.n_head_kv * s.group;
  return {.op = Op::kAttention,
          .src = {{.ne = {s.d_k, n_head, s.tokens, 1}, .layout = v.q},
                  {.type = t, .ne = {s.d_k, s.n_head_kv, s.n_kv, 1}, .layout = v.kv, .sigma = 2.0f},
                  {.type = t, .ne = {s.d_v, s.n_head_kv, s.n_kv, 1}, .layout = v.kv}},
          .dst = {.ne = {s.d_v, n_head, s.tokens, 1}, .layout = v.dst},
          .ids = attention_positions(s.tokens, s.n_kv, s.scattered),
          .attn = {.scale = 1.0f / std::sqrt(static_cast<float>(s.d_k))},
          // Over an F16 cache below 64 tokens ref keeps the V sums in F16, as llama.cpp's CPU
          // flash attention does (docs/engine.md); a backend that sums in F32 (Vulkan, as
          // ggml's own GPU kernels do) is then off by the F16 sum's rounding: NMSE 1e-6 over
          // 77 cells, 4e-5 over 3000 (test-backend-ops allows flash attention 5e-4).
          .tol = {.max_nmse = t == DType::kF16 && s.tokens < 64 ? 1e-4 : 1e-7, .rel = 2e-5},
          .note = s.scattered ? "scattered positions" : "positions at the end"};
}

// An attention case's options (AttnParams) and whether it has sinks (a fourth input, one per
// query head); apply() sets them and names them in the note.
struct AttnOption {
  const char* what;
  bool causal;
  int32_t window;
  float softcap;
  bool sinks;
  void apply(Case& c) const {
    c.attn.causal = causal;
    c.attn.window = window;
    c.attn.softcap = softcap;
    if (sinks) c.src.push_back({.ne = {c.src[0].ne[1], 1, 1, 1}});
    c.note += what;
  }
};

// The options of AttnParams, and sinks (a fourth input, one per query head), each over
// decode and batches, contiguous and scattered positions, 77 cells and 300 (chunked).
void add_attention_option_cases(DType t, std::vector<Case>& out) {
  constexpr AttnOption kOptions[] = {
      {"window 5", true, 5, 0, false},    {"window 70", true, 70, 0, false},
      {"non-causal", false, 0, 0, false}, {"softcap 0.7", true, 0, 0.7f, false},
      {"sinks", true, 0, 0, true},        {"window 3, softcap 2, sinks", true, 3, 2, true}};
  for (const AttnOption& o : kOptions) {
    for (int64_t n_kv : {77, 300}) {
      for (int64_t tokens : {1, 7, 33}) {
        for (bool scattered : {false, true}) {
          if (tokens == 1 && scattered) continue;
          Case c = attention_case(t, {64, 64, 2, n_kv, 4, tokens, scattered},
                                  {Layout::kDense, Layout::kDense, Layout::kDense});
          c.note += ", ";
          o.apply(c);
          out.push_back(std::move(c));
        }
      }
    }
  }
}

// Tagged cells (AttnParams::cells) under each option, over decode and batches, 48 cells and
// 300 (chunked): a sliding-window ring (position p in cell p % n_kv, the tokens the newest
// positions, a few cells still empty) and cells holding a shuffled subset of positions with
// gaps and empty cells, read by tokens at present and absent positions.
void add_attention_tagged_cases(DType t, std::vector<Case>& out) {
  constexpr AttnOption kOptions[] = {{"causal", true, 0, 0, false},
                                     {"window 16", true, 16, 0, false},
                                     {"non-causal", false, 0, 0, false},
                                     {"window 5, softcap 2, sinks", true, 5, 2, true}};
  for (const AttnOption& o : kOptions) {
    for (int64_t n_kv : {48, 300}) {
      for (int64_t tokens : {1, 7, 33}) {
        for (bool ring : {true, false}) {
          Case c = attention_case(t, {64, 64, 2, n_kv, 4, tokens, false},
                                  {Layout::kDense, Layout::kDense, Layout::kDense});
          std::mt19937 rng(static_cast<uint32_t>(n_kv * 100 + tokens));
          c.cells.assign(static_cast<size_t>(n_kv), -1);
          c.ids.clear();
          if (ring) {
            const auto newest = static_cast<int32_t>(1000 + n_kv);
            for (int32_t p = newest - static_cast<int32_t>(n_kv) + 4; p <= newest; ++p) c.cells[p % n_kv] = p;
            for (int64_t i = 0; i < tokens; ++i)
              c.ids.push_back(newest - static_cast<int32_t>(tokens - 1 - i));
          } else {
            std::vector<int32_t> positions(static_cast<size_t>(2 * n_kv));
            std::iota(positions.begin(), positions.end(), 0);
            std::shuffle(positions.begin(), positions.end(), rng);
            std::copy_n(positions.begin(), n_kv - 5, c.cells.begin());
            std::shuffle(c.cells.begin(), c.cells.end(), rng);
            for (int64_t i = 0; i < tokens; ++i)
              c.ids.push_back(positions[static_cast<size_t>(i * 3 % (2 * n_kv))]);
          }
          c.note = std::string(ring ? "ring" : "shuffled cells") + ", ";
          o.apply(c);
          out.push_back(std::move(c));
        }
      }
    }
  }
}

// Several sequences in one call (AttnParams::seqs): a decode step, a prompt chunk and another
// decode step, each over its own cells of one cache (with unused cells between them, and the
// second sequence's cells split into chunks on cpu), positions counted from each sequence's
// first cell or tagged as rings, under each option.
void add_attention_seq_cases(DType t, std::vector<Case>& out) {
  constexpr AttnOption kOptions[] = {{"causal", true, 0, 0, false},
                                     {"window 5", true, 5, 0, false},
                                     {"non-causal", false, 0, 0, false},
                                     {"softcap 2, sinks", true, 0, 2, true}};
  struct Seq {
    int32_t tokens, cells;
  };
  constexpr Seq kSeqs[] = {{1, 40}, {7, 300}, {1, 9}};
  constexpr int32_t kStride = 310;  // sequence i's cells start at i * kStride
  for (const AttnOption& o : kOptions) {
    for (bool tagged : {false, true}) {
      Case c = attention_case(t, {64, 64, 2, 3 * kStride, 4, 9, false},
                              {Layout::kDense, Layout::kDense, Layout::kDense});
      c.ids.clear();
      if (tagged) c.cells.assign(3 * kStride, -1);
      int32_t token = 0;
      for (int32_t i = 0; i < 3; ++i) {
        const Seq& q = kSeqs[i];
        c.seqs.push_back({token, q.tokens, i * kStride, q.cells});
        token += q.tokens;
        // Untagged: the newest positions of the sequence's cells. Tagged: a full ring
        // (position p in cell p % cells) whose tokens are its newest positions.
        const int32_t newest = tagged ? 1000 + 7 * i : q.cells - 1;
        for (int32_t j = 0; j < q.tokens; ++j) c.ids.push_back(newest - (q.tokens - 1 - j));
        if (tagged) {
          for (int32_t p = newest - q.cells + 1; p <= newest; ++p) c.cells[i * kStride + p % q.cells] = p;
        }
      }
      c.note = std::string("3 sequences, ") + (tagged ? "rings, " : "");
      o.apply(c);
      out.push_back(std::move(c));
    }
  }
}

// Head dims 64 and one that is not a whole number of 8-float vectors (block types: one
// block), 128 for F16 (32-cell tiles); GQA groups 1 and 4; decode and batches over 77
// cells, few tokens over 300 (split into chunks); value heads narrower than key heads; over
// F16 (the default cache) a long prompt and a deep decode, over Q4_0 a group of 8; then
// every option.
std::vector<Case> attention_cases(DType t) {
  std::vector<Case> out;
  constexpr AttentionViews kDense = {Layout::kDense, Layout::kDense, Layout::kDense};
  constexpr AttentionViews kPadded = {Layout::kPadded, Layout::kPadded, Layout::kPadded};
  constexpr AttentionViews kPermutedQ = {Layout::kPermuted, Layout::kDense, Layout::kPermuted};
  constexpr AttentionViews kPermutedKv = {Layout::kDense, Layout::kPermuted, Layout::kDense};
  const int64_t odd_dim = block(t) == 1 ? 20 : 32;
  for (int64_t d : {int64_t{64}, int64_t{128}, odd_dim}) {
    if (d == 128 && t != DType::kF16) continue;
    for (int64_t group : {1, 4}) {
      for (int64_t tokens : {1, 7, 33}) {
        out.push_back(attention_case(t, {d, d, 2, 77, group, tokens, false}, kPadded));
        if (tokens > 1) out.push_back(attention_case(t, {d, d, 2, 77, group, tokens, true}, kPermutedQ));
      }
    }
    out.push_back(attention_case(t, {d, d, 2, 300, 4, 1, false}, kDense));
    out.push_back(attention_case(t, {d, d, 2, 300, 4, 7, true}, kPadded));
    out.push_back(attention_case(t, {d, d, 2, 300, 4, 1, false}, kPermutedKv));
  }
  out.push_back(attention_case(t, {64, 32, 2, 77, 4, 7, false}, kDense));
  if (t == DType::kF16) {
    out.push_back(attention_case(t, {64, 64, 2, 100, 4, 100, false}, kDense));
    out.push_back(attention_case(t, {64, 64, 4, 3000, 4, 1, false}, kPadded));
    // One kv head, one token: the cpu backend splits the group's heads across threads.
    out.push_back(attention_case(t, {64, 64, 1, 77, 8, 1, false}, kDense));
  }
  if (t == DType::kQ4_0) out.push_back(attention_case(t, {128, 128, 1, 700, 8, 3, true}, kPermutedQ));
  add_attention_option_cases(t, out);
  add_attention_tagged_cases(t, out);
  add_attention_seq_cases(t, out);
  return out;
}

// From `from` to each type ref copies (the contract's destination types are its source
// types): float pairs through every view in 45 rows (so 1025 columns are split across
// threads), pairs with a block type through row views in 3 rows of 1, 7, 33, 1025 blocks.
std::vector<Case> copy_cases(DType from, std::span<const DType> types) {
  std::vector<Case> out;
  constexpr Views kFloatViews[] = {{Layout::kDense, Layout::kDense},
                                   {Layout::kTransposed, Layout::kDense},
                                   {Layout::kPadded, Layout::kPadded},
                                   {Layout::kPermuted, Layout::kTransposed}};
  for (DType to : types) {
    const int64_t unit = std::max(block(from), block(to));
    const bool floats = unit == 1;
    const std::span<const Views> views = floats ? std::span<const Views>(kFloatViews) : std::span(kRowViews);
    for (int64_t n : kSizes) {
      const std::array<int64_t, 4> ne =
          floats ? std::array<int64_t, 4>{n, 9, 5, 1} : std::array<int64_t, 4>{n * unit, 3, 1, 1};
      for (Views v : views) {
        out.push_back({.op = Op::kCopy,
                       .src = {{.type = from, .ne = ne, .layout = v.src}},
                       .dst = {.type = to, .ne = ne, .layout = v.dst},
                       .tol = {.bitwise = true}});
      }
    }
    if (to == from) {  // dense, in whole 16-byte units (kSizes' rows are odd): device copies move those
      const std::array<int64_t, 4> ne{16 * unit, 9, 5, 1};
      out.push_back({.op = Op::kCopy,
                     .src = {{.type = from, .ne = ne}},
                     .dst = {.type = to, .ne = ne},
                     .tol = {.bitwise = true},
                     .note = "whole 16-byte units"});
    }
  }
  return out;
}

// A valid gate [n_expert, n_tokens] for k slots: each token's k experts (spread so experts
// share tokens) with positive weights, except token 1, which has one fewer (an expert whose
// weight underflowed), so the slots past it must come out 0.
std::vector<float> gate_values(int64_t n_expert, int64_t n_tokens, int32_t k) {
  std::vector<float> g(static_cast<size_t>(n_expert * n_tokens), 0.0f);
  const std::span<const float> r = gaussian(static_cast<size_t>(n_tokens * k), 7);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int32_t used = t == 1 && k > 1 ? k - 1 : k;
    for (int32_t s = 0; s < used; ++s) {
      const int64_t e = (t * 3 + s * 5) % n_expert;
      g[static_cast<size_t>(t * n_expert + e)] = 0.1f + std::fabs(r[static_cast<size_t>(t * k + s)]);
    }
  }
  return g;
}

// Both gatings, with and without renormalising, 1 to 8 of 8, 32 and 128 experts, 1 to 33
// tokens; logits with ties (equal values must go to the lower expert).
std::vector<Case> moe_gate_cases(DType t) {
  std::vector<Case> out;
  for (int64_t e : {8, 32, 128}) {
    for (int32_t k : {1, 2, 8}) {
      for (MoeGating gating : {MoeGating::kSoftmaxTopK, MoeGating::kTopKSoftmax}) {
        for (bool norm : {false, true}) {
          for (int64_t n : {1, 7, 33}) {
            out.push_back({.op = Op::kMoeGate,
                           .src = {{.type = t, .ne = {e, n, 1, 1}, .sigma = 2.0f}},
                           .dst = {.ne = {e, n, 1, 1}},
                           .moe = {.k = k, .gating = gating, .norm = norm},
                           .tol = {.bitwise = true}});
          }
        }
      }
    }
  }
  std::vector<float> ties(8 * 3, 0.5f);
  ties[3] = 2.0f;
  out.push_back({.op = Op::kMoeGate,
                 .src = {{.type = t, .ne = {8, 3, 1, 1}, .values = ties}},
                 .dst = {.ne = {8, 3, 1, 1}},
                 .moe = {.k = 2, .gating = MoeGating::kSoftmaxTopK, .norm = true},
                 .tol = {.bitwise = true},
                 .note = "tied logits"});
  return out;
}

// Experts [K, M, E] of every row length the type allows short of 33 blocks, x shared by the
// slots ([K, 1, N], the gate and up products) or one per slot ([K, k, N], down); decode (1
// token) and prefill (33 tokens: experts shared between tokens; 300: many per expert); a
// padded x.
std::vector<Case> mul_mat_id_cases(DType t) {
  std::vector<Case> out;
  const int64_t bs = block(t);
  const auto add = [&](int64_t k_in, int64_t m, int64_t e, int32_t k, int64_t n, bool per_slot, Layout xl) {
    out.push_back({.op = Op::kMulMatId,
                   .src = {{.type = t, .ne = {k_in, m, e, 1}, .weight = true},
                           {.ne = {k_in, per_slot ? k : 1, n, 1}, .layout = xl},
                           {.ne = {e, n, 1, 1}, .values = gate_values(e, n, k)}},
                   .dst = {.ne = {m, k, n, 1}},
                   .moe = {.k = k},
                   .tol = mul_mat_tolerance(t)});
  };
  for (int64_t k_in : {bs, 7 * bs}) {
    for (int32_t k : {1, 2}) {
      for (int64_t n : {1, 3, 33}) {
        for (bool per_slot : {false, true}) add(k_in, 40, 4, k, n, per_slot, Layout::kDense);
      }
    }
  }
  add(2 * bs, 33, 8, 4, 5, true, Layout::kPadded);
  add(std::max<int64_t>(bs, 32), 1024, 8, 2, 17, false, Layout::kDense);
  // A long prompt: each expert's tokens span several 64-token tiles of a GPU's grouped kernel.
  for (bool per_slot : {false, true}) add(std::max<int64_t>(bs, 64), 70, 4, 2, 300, per_slot, Layout::kDense);
  return out;
}

// k expert outputs per token weighted by a gate and summed, 1 to 1025 rows.
std::vector<Case> moe_sum_cases(DType t) {
  std::vector<Case> out;
  for (int64_t m : kSizes) {
    for (int32_t k : {1, 2, 4}) {
      for (int64_t n : {1, 7}) {
        out.push_back({.op = Op::kMoeSum,
                       .src = {{.type = t, .ne = {m, k, n, 1}},
                               {.type = t, .ne = {8, n, 1, 1}, .values = gate_values(8, n, k)}},
                       .dst = {.ne = {m, n, 1, 1}},
                       .tol = {.rel = 1e-6}});
      }
    }
  }
  return out;
}

// The chosen experts' biases added to their slots (gpt-oss), 1 to 1025 rows.
std::vector<Case> add_id_cases(DType t) {
  std::vector<Case> out;
  for (int64_t m : kSizes) {
    for (int32_t k : {1, 2, 4}) {
      for (int64_t n : {1, 7}) {
        out.push_back({.op = Op::kAddId,
                       .src = {{.type = t, .ne = {m, k, n, 1}},
                               {.type = t, .ne = {m, 8, 1, 1}},
                               {.type = t, .ne = {8, n, 1, 1}, .values = gate_values(8, n, k)}},
                       .dst = {.ne = {m, k, n, 1}},
                       .tol = {.bitwise = true}});
      }
    }
  }
  // Gates moe_gate does not make, whose slots still follow moe_slots (heaviest first, ties to
  // the lower expert): three equal weights for two slots, and 100 nonzero weights of 100
  // experts (more than the 64 a device kernel gathers) for four.
  std::vector<float> tied(8 * 3, 0.0f);
  for (size_t tok = 0; tok < 3; ++tok) {
    for (size_t e : {tok + 5, tok + 1, tok + 3}) tied[tok * 8 + e % 8] = 0.25f;
  }
  std::vector<float> dense(100 * 2);
  const std::span<const float> r = gaussian(dense.size(), 11);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = 0.1f + std::fabs(r[i]);
  for (const auto& [e, k, values, note] : {std::tuple{int64_t{8}, 2, tied, "tied gate weights"},
                                           std::tuple{int64_t{100}, 4, dense, "100 nonzero gate weights"}}) {
    const int64_t n = static_cast<int64_t>(values.size()) / e;
    out.push_back({.op = Op::kAddId,
                   .src = {{.type = t, .ne = {33, k, n, 1}},
                           {.type = t, .ne = {33, e, 1, 1}},
                           {.type = t, .ne = {e, n, 1, 1}, .values = values}},
                   .dst = {.ne = {33, k, n, 1}},
                   .tol = {.bitwise = true},
                   .note = note});
  }
  return out;
}

// The input types of `op` with t in its typed slot (tables, weights, K/V, copy sources;
// every input of the F32 ops).
std::vector<DType> signature(Op op, DType t) {
  switch (op) {
    case Op::kGetRows:
    case Op::kRmsNorm:
    case Op::kRope:
    case Op::kCopy:
    case Op::kScale:
    case Op::kNorm:
    case Op::kGelu:
    case Op::kTanh:
    case Op::kMoeGate: return {t};
    case Op::kMulMat: return {t, DType::kF32};
    case Op::kMulMatId: return {t, DType::kF32, DType::kF32};
    case Op::kMoeSum: return {t, t};
    case Op::kAddId: return {t, t, t};
    case Op::kSwigluOai: return {t, t};
    case Op::kMul:
    case Op::kAdd:
    case Op::kSwiglu:
    case Op::kGeglu: return {t, t};
    case Op::kAttention: return {DType::kF32, t, t};
    case Op::kCount: break;
  }
  return {};
}

// Every case of `op` for each of `types` (those ref runs it with).
std::vector<Case> make_cases(Op op, std::span<const DType> types) {
  std::vector<Case> out;
  for (DType t : types) {
    std::vector<Case> more;
    switch (op) {
      case Op::kGetRows: more = get_rows_cases(t); break;
      case Op::kMulMat: more = mul_mat_cases(t); break;
      case Op::kRmsNorm:
      case Op::kNorm: more = norm_cases(op, t); break;
      case Op::kMul:
      case Op::kAdd: more = binary_cases(op, t); break;
      case Op::kRope: more = rope_cases(t); break;
      case Op::kSwiglu:
      case Op::kGeglu: more = glu_cases(op, t); break;
      case Op::kScale:
      case Op::kGelu:
      case Op::kTanh: more = unary_cases(op, t); break;
      case Op::kAttention: more = attention_cases(t); break;
      case Op::kCopy: more = copy_cases(t, types); break;
      case Op::kMoeGate: more = moe_gate_cases(t); break;
      case Op::kMulMatId: more = mul_mat_id_cases(t); break;
      case Op::kMoeSum: more = moe_sum_cases(t); break;
      case Op::kAddId: more = add_id_cases(t); break;
      case Op::kSwigluOai: more = swiglu_oai_cases(t); break;
      case Op::kCount: break;
    }
    std::move(more.begin(), more.end(), std::back_inserter(out));
  }
  return out;
}

// The types ref runs `op` with; a type the backend claims and ref lacks fails, as nothing
// could check its results.
std::vector<DType> oracle_types(Op op, const Backend& ref, const Backend& be) {
  std::vector<DType> out;
  for (uint32_t id = 0; id < kDTypeIdCount; ++id) {
    const std::optional<DType> t = dtype_from_id(id);
    if (!t) continue;
    const std::vector<DType> types = signature(op, *t);
    if (ref.supports(op, types)) {
      out.push_back(*t);
    } else if (be.supports(op, types)) {
      ADD_FAILURE() << be.name() << " runs " << op_name(op) << " of " << dtype_name(*t)
                    << ", which ref lacks: nothing checks its results";
    }
  }
  return out;
}

// ---- Running a case on a backend ----

// A backend and the weight bytes it adopted, which outlive it as a model file does.
struct Target {
  std::deque<std::vector<uint8_t>> files;
  std::vector<std::unique_ptr<Buffer>> file_buffers;
  std::unique_ptr<Backend> be;
};

using Inputs = std::vector<std::vector<uint8_t>>;  // each input's dense bytes

Inputs make_inputs(const Case& c) {
  Inputs in;
  for (size_t i = 0; i < c.src.size(); ++i) {
    in.push_back(dense_bytes(c.src[i], static_cast<uint32_t>(11 + i)));
  }
  return in;
}

TensorView view_of(const Spec& s, Buffer& buffer, size_t offset) {
  TensorView v;
  v.buffer = &buffer;
  v.offset = offset;
  v.type = s.type;
  v.ne = s.ne;
  v.nb = strides(s);
  return v;
}

// A weight as model/weights.cpp binds one: inside adopted bytes, in a buffer over them, with
// its host address, prepared for `use` (the cpu paths interleave mul_mat matrices then).
TensorView load_weight(Target& t, const Spec& s, std::vector<uint8_t> bytes, Op use) {
  const std::vector<uint8_t>& file = t.files.emplace_back(std::move(bytes));
  t.be->adopt_weight_file(file, false);
  t.file_buffers.push_back(wrap_host_memory(file));
  TensorView v = view_of(s, *t.file_buffers.back(), 0);
  v.data = const_cast<uint8_t*>(file.data());
  t.be->prepare_weight(v, use);
  return v;
}

// A tensor in a device buffer and the bytes first put there.
struct Placed {
  Buffer* buffer = nullptr;
  size_t offset = 0;
  std::vector<uint8_t> initial;
};

constexpr size_t kLead = 64;  // bytes before each tensor in its own buffer: offsets are honoured

Result<Placed> place(Backend& be, std::vector<uint8_t> bytes, std::vector<std::unique_ptr<Buffer>>& owned) {
  PADDOCK_ASSIGN(std::unique_ptr<Buffer> b, be.device().alloc(kLead + bytes.size()));
  b->set(kLead, bytes);
  owned.push_back(std::move(b));
  return Placed{owned.back().get(), kLead, std::move(bytes)};
}

std::vector<uint8_t> read(const Placed& p) {
  std::vector<uint8_t> now(p.initial.size());
  p.buffer->get(p.offset, now);
  return now;
}

// Runs c as a one-node graph on t's device and returns the output's dense bytes.
Result<std::vector<uint8_t>> run_case(Target& t, const Case& c, const Inputs& in) {
  Backend& be = *t.be;
  std::vector<std::unique_ptr<Buffer>> owned;
  std::vector<Placed> placed;  // inputs in device buffers (weights aside)
  Graph g;
  Node n;
  n.op = c.op;
  n.name = std::string(op_name(c.op));
  n.n_src = static_cast<int>(c.src.size());
  for (size_t i = 0; i < c.src.size(); ++i) {
    std::vector<uint8_t> bytes = scatter(c.src[i], in[i], unwritten(c.src[i]));
    if (c.src[i].weight) {
      n.src[i] = load_weight(t, c.src[i], std::move(bytes), c.op);
      continue;
    }
    PADDOCK_ASSIGN(Placed p, place(be, std::move(bytes), owned));
    n.src[i] = view_of(c.src[i], *p.buffer, p.offset);
    placed.push_back(std::move(p));
  }
  // The output: src[0] itself, a tensor in the graph's compute buffer, or (strided) its own.
  const bool planned = !c.in_place && c.dst.layout == Layout::kDense;
  Placed out;
  if (c.in_place) {
    n.dst = n.src[0];
    out = placed.front();
  } else if (planned) {
    n.dst = g.tensor(c.dst.type, {c.dst.ne[0], c.dst.ne[1], c.dst.ne[2], c.dst.ne[3]});
    out = {n.dst.buffer, n.dst.offset, unwritten(c.dst)};
  } else {
    PADDOCK_ASSIGN(out, place(be, unwritten(c.dst), owned));
    n.dst = view_of(c.dst, *out.buffer, out.offset);
  }
  n.ids = g.keep(c.ids);
  n.scalar = c.scalar;
  n.scalar2 = c.scalar2;
  n.rope = c.rope;
  n.attn = c.attn;
  n.attn.cells = g.keep(c.cells);
  n.attn.seqs = c.seqs;
  n.moe = c.moe;
  g.add_node(std::move(n));
  PADDOCK_TRY(g.allocate(be.device()));
  if (planned) out.buffer->set(out.offset, out.initial);
  PADDOCK_TRY(be.compute(g));

  for (size_t i = c.in_place ? 1 : 0; i < placed.size(); ++i) {
    if (read(placed[i]) != placed[i].initial) return internal_error("an input changed");
  }
  const std::vector<uint8_t> now = read(out);
  std::vector<uint8_t> dense = gather(c.dst, now);
  if (scatter(c.dst, dense, out.initial) != now) {
    return internal_error("bytes outside the output view changed");
  }
  return dense;
}

// ---- Comparing with ref ----

double nmse(std::span<const float> got, std::span<const float> want) {
  double err = 0;
  double norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    err += d * d;
    norm += static_cast<double>(want[i]) * want[i];
  }
  return norm == 0 ? (err == 0 ? 0 : INFINITY) : err / norm;
}

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

std::string coords(const std::array<int64_t, 4>& ne, int64_t i) {
  return "(" + std::to_string(i % ne[0]) + "," + std::to_string(i / ne[0] % ne[1]) + "," +
         std::to_string(i / (ne[0] * ne[1]) % ne[2]) + "," + std::to_string(i / (ne[0] * ne[1] * ne[2])) +
         ")";
}

// Collects the first few elements out of bounds, and how many.
class Misses {
 public:
  void add(const std::array<int64_t, 4>& ne, int64_t i, float got, float want) {
    if (count_++ < 3) text_ += " at " + coords(ne, i) + " got " + num(got) + " want " + num(want) + ";";
  }
  std::string report(const std::string& what) const {
    return count_ == 0 ? "" : std::to_string(count_) + " elements " + what + ":" + text_ + " ";
  }

 private:
  int64_t count_ = 0;
  std::string text_;
};

// The products that a GPU runs with integer dot products (Vulkan's int_dot_product): those
// of every block-quantized weight type (the cases' activations are rows of floats).
bool int_dot_case(const Case& c) { return dtype_info(c.src[0].type).block_size > 1; }

// mul_mat and mul_mat_id: within the activation tolerance x sum|w x| of ref; on host
// backends (and integer-dot products, kQuantizedDot) also within 2e-5 x sum|w x| of
// quantized_dot, which quantizes x to vec_dot_type as they do. Output column j multiplies the weight rows
// from row0(j) (-1: an empty expert slot, which must be 0) by x's column xcol(j).
std::string mul_mat_errors(const Case& c, Precision p, const Inputs& in, std::span<const float> got,
                           std::span<const float> want) {
  const DType t = c.src[0].type;
  const int64_t k = c.src[0].ne[0];
  const int64_t m = c.src[0].ne[1];
  const int64_t ncols = static_cast<int64_t>(want.size()) / m;
  const int64_t x_cols = n_elements(c.src[1]) / k;
  std::vector<float> w = dequantize(t, in[0], n_elements(c.src[0]));
  std::vector<float> x = dequantize(DType::kF32, in[1], k * x_cols);
  std::vector<int64_t> row0(static_cast<size_t>(ncols)), xcol(static_cast<size_t>(ncols));
  for (int64_t j = 0; j < ncols; ++j) {
    row0[static_cast<size_t>(j)] = 0;
    xcol[static_cast<size_t>(j)] = j;
  }
  if (c.op == Op::kMulMatId) {
    const int64_t n_expert = c.src[0].ne[2];
    const int32_t slots = c.moe.k;
    const std::vector<float> gate = dequantize(DType::kF32, in[2], n_elements(c.src[2]));
    for (int64_t tok = 0; tok < ncols / slots; ++tok) {
      std::vector<int32_t> experts(static_cast<size_t>(slots));
      const int n = moe_slots(&gate[static_cast<size_t>(tok * n_expert)], n_expert, slots, experts.data());
      for (int32_t s = 0; s < slots; ++s) {
        const auto j = static_cast<size_t>(tok * slots + s);
        row0[j] = s < n ? experts[static_cast<size_t>(s)] * m : -1;
        xcol[j] = tok * c.src[1].ne[1] + (c.src[1].ne[1] == 1 ? 0 : s);
      }
    }
  }
  std::vector<float> abs_x(x);
  for (float& v : w) v = std::fabs(v);
  for (float& v : abs_x) v = std::fabs(v);
  const QuantOps* q = quant_ops(t);
  const bool vs_dot = q->vec_dot != nullptr &&
                      (p == Precision::kElementwise || (p == Precision::kQuantizedDot && int_dot_case(c)));
  Misses off_ref, off_dot;
  for (int64_t j = 0; j < ncols; ++j) {
    const int64_t r0 = row0[static_cast<size_t>(j)];
    const size_t at = static_cast<size_t>(xcol[static_cast<size_t>(j)] * k);
    const std::vector<uint8_t> act =
        vs_dot ? quantize(q->vec_dot_type, {&x[at], static_cast<size_t>(k)}) : std::vector<uint8_t>();
    for (int64_t r = 0; r < m; ++r) {
      const int64_t e = j * m + r;
      if (r0 < 0) {
        if (got[e] != 0.0f) off_ref.add(c.dst.ne, e, got[e], 0.0f);
        continue;
      }
      const double abs_sum = ref::dot_f32(&w[static_cast<size_t>((r0 + r) * k)], &abs_x[at], k);
      if (!(std::fabs(got[e] - want[e]) <= c.tol.rel * abs_sum + 1e-6)) {
        off_ref.add(c.dst.ne, e, got[e], want[e]);
      }
      if (!vs_dot) continue;
      float dot = 0;
      q->vec_dot(k, &dot, &in[0][dtype_row_bytes(t, k) * static_cast<size_t>(r0 + r)], act.data());
      if (!(std::fabs(got[e] - dot) <= 2e-5 * abs_sum + 1e-6)) off_dot.add(c.dst.ne, e, got[e], dot);
    }
  }
  return off_ref.report("off ref by more than " + num(c.tol.rel) + " x sum|w x|") +
         off_dot.report("off quantized_dot by more than 2e-5 x sum|w x|");
}

// Why got (the backend's output) is not close enough to want (ref's), or "".
std::string compare(const Case& c, Precision p, const Inputs& in, std::span<const uint8_t> got,
                    std::span<const uint8_t> want) {
  const std::vector<float> g = dequantize(c.dst.type, got, n_elements(c.dst));
  const std::vector<float> w = dequantize(c.dst.type, want, n_elements(c.dst));
  if (c.op == Op::kMulMat || c.op == Op::kMulMatId) return mul_mat_errors(c, p, in, g, w);
  std::string why;
  const double e = nmse(g, w);
  if (!(e <= c.tol.max_nmse)) why += "NMSE " + num(e) + " > " + num(c.tol.max_nmse) + ". ";
  if (c.op == Op::kCopy && c.src[0].type == c.dst.type && !std::equal(got.begin(), got.end(), want.begin())) {
    why += "a copy within one type changed bytes (on every backend it moves them). ";
  }
  if (p != Precision::kElementwise) return why;
  if (c.tol.bitwise && std::equal(got.begin(), got.end(), want.begin())) return why;
  Misses misses;
  for (size_t i = 0; i < w.size(); ++i) {
    const bool close = c.tol.bitwise ? std::memcmp(&g[i], &w[i], sizeof(float)) == 0
                                     : std::fabs(g[i] - w[i]) <= c.tol.rel * std::max(1.0f, std::fabs(w[i]));
    if (!close) misses.add(c.dst.ne, static_cast<int64_t>(i), g[i], w[i]);
  }
  const std::string report = misses.report(
      c.tol.bitwise ? "differ from ref" : "off ref by more than " + num(c.tol.rel) + " x max(1, |ref|)");
  return why + (report.empty() && c.tol.bitwise ? "bytes differ from ref's (the same values). " : report);
}

// ---- The tests ----

Result<Target> make_target(const BackendUnderTest& entry) {
  PADDOCK_ASSIGN(std::unique_ptr<Backend> be, entry.make());
  Target t;
  t.be = std::move(be);
  return t;
}

class BackendOps : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

// Every case of one op: ref's output, then the backend's, compared.
TEST_P(BackendOps, MatchRef) {
  const BackendUnderTest entry = backends_under_test()[std::get<0>(GetParam())];
  const Op op = static_cast<Op>(std::get<1>(GetParam()));
  Result<Target> made = make_target(entry);
  if (!made.ok() && entry.required) FAIL() << entry.name << ": " << made.status().to_string();
  if (!made.ok()) GTEST_SKIP() << "SKIPPED LOUDLY: " << entry.name << ": " << made.status().to_string();
  Target be = std::move(made).value();
  Target ref;
  ref.be = make_ref_backend();
  const std::vector<DType> types = oracle_types(op, *ref.be, *be.be);
  const std::vector<Case> cases = make_cases(op, types);
  ASSERT_FALSE(cases.empty()) << op_name(op) << " has no op-test cases";
  size_t passed = 0;
  std::vector<std::string> unsupported;
  for (const Case& c : cases) {
    if (!be.be->supports(c.op, c.types())) {
      unsupported.push_back(c.name());
      continue;
    }
    const Inputs in = make_inputs(c);
    const Result<std::vector<uint8_t>> want = run_case(ref, c, in);
    ASSERT_TRUE(want.ok()) << "ref " << c.name() << ": " << want.status().to_string();
    const Result<std::vector<uint8_t>> got = run_case(be, c, in);
    const std::string why =
        got.ok() ? compare(c, entry.precision, in, *got, *want) : got.status().to_string();
    if (why.empty()) {
      ++passed;
    } else {
      ADD_FAILURE() << entry.name << " " << c.name() << ": " << why;
    }
  }
  std::printf("%s %s: %zu of %zu cases match ref, %zu not supported\n", entry.name.c_str(),
              std::string(op_name(op)).c_str(), passed, cases.size(), unsupported.size());
  for (const std::string& u : unsupported) {
    if (entry.covers_ref) {
      ADD_FAILURE() << entry.name << " does not support " << u << ", which ref runs";
    } else {
      std::printf("  NOT SUPPORTED: %s\n", u.c_str());
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<size_t, int>>& info) {
  return backends_under_test()[std::get<0>(info.param)].name + "_" +
         std::string(op_name(static_cast<Op>(std::get<1>(info.param))));
}

// Each backend under test with each op it lists (every op where it lists none).
std::vector<std::tuple<size_t, int>> backend_ops() {
  std::vector<std::tuple<size_t, int>> out;
  const std::vector<BackendUnderTest> entries = backends_under_test();
  for (size_t b = 0; b < entries.size(); ++b) {
    for (int op = 0; op < static_cast<int>(kOpCount); ++op) {
      const std::vector<Op>& only = entries[b].ops;
      if (only.empty() || std::find(only.begin(), only.end(), static_cast<Op>(op)) != only.end()) {
        out.emplace_back(b, op);
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Every, BackendOps, ::testing::ValuesIn(backend_ops()), param_name);

// The matrix products take every type ref multiplies; pinned for MXFP4, the type MoE files
// carry their experts in (MUL_MAT_ID on each path's row and interleaved kernels).
TEST(BackendOpsCoverage, MatrixProductsRunMXFP4Weights) {
  const std::unique_ptr<Backend> ref = make_ref_backend();
  for (Op op : {Op::kMulMat, Op::kMulMatId}) {
    const std::vector<DType> types = oracle_types(op, *ref, *ref);
    EXPECT_NE(std::find(types.begin(), types.end(), DType::kMXFP4), types.end()) << op_name(op);
  }
}

// A norm (RMS or LayerNorm's) times its weight row as one pass, and the same with the norm's
// output read again by a later node: a backend that runs the pair as one kernel (Vulkan's
// rms_norm_mul) must still give ref's numbers, and must not where the norm's output is needed.
std::vector<float> norm_times_weight(Backend& be, bool center, bool read_again) {
  constexpr int64_t kN = 200;
  constexpr int64_t kRows = 3;
  std::mt19937 rng(7);
  std::normal_distribution<float> any(0.5f, 2.0f);
  std::vector<float> x(kN * kRows);
  std::vector<float> w(kN);
  for (float& v : x) v = any(rng);
  for (float& v : w) v = any(rng);
  const auto bytes = [](const std::vector<float>& v) {
    return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                reinterpret_cast<const uint8_t*>(v.data() + v.size()));
  };
  std::vector<std::unique_ptr<Buffer>> owned;
  const Placed px = std::move(place(be, bytes(x), owned)).value();
  const Placed pw = std::move(place(be, bytes(w), owned)).value();
  Graph g;
  const TensorView xv = TensorView::in_buffer(*px.buffer, px.offset, DType::kF32, {kN, kRows});
  const TensorView wv = TensorView::in_buffer(*pw.buffer, pw.offset, DType::kF32, {kN});
  const TensorView n = center ? g.norm(xv, 1e-5f, "norm") : g.rms_norm(xv, 1e-5f, "norm");
  TensorView out = g.mul(n, wv, "attn_norm");
  if (read_again) out = g.add(out, n, "sum");
  EXPECT_TRUE(g.allocate(be.device()).is_ok());
  const Status st = be.compute(g);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  std::vector<float> got(kN * kRows);
  out.buffer->get(out.offset, {reinterpret_cast<uint8_t*>(got.data()), got.size() * sizeof(float)});
  return got;
}

// Each backend under test (be_) against ref on passes of several nodes.
class BackendPasses : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    const BackendUnderTest entry = backends_under_test()[GetParam()];
    Result<std::unique_ptr<Backend>> made = entry.make();
    if (!made.ok() && entry.required) FAIL() << entry.name << ": " << made.status().to_string();
    if (!made.ok()) GTEST_SKIP() << "SKIPPED LOUDLY: " << entry.name << ": " << made.status().to_string();
    be_ = std::move(made).value();
  }
  std::unique_ptr<Backend> be_;
  const std::unique_ptr<Backend> ref_ = make_ref_backend();
};

// Runs g on be: as one pass, or node by node (every output read back, so nothing is fused).
void run_pass(Backend& be, Graph& g, bool each_node) {
  ASSERT_TRUE(g.allocate(be.device()).is_ok());
  const Status st = each_node ? be.compute(g, [](const Node&) {}) : be.compute(g);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
}

TEST_P(BackendPasses, NormTimesWeightMatchesRefFusedOrNot) {
  for (bool center : {false, true}) {
    for (bool read_again : {false, true}) {
      const std::vector<float> want = norm_times_weight(*ref_, center, read_again);
      const std::vector<float> got = norm_times_weight(*be_, center, read_again);
      EXPECT_LE(nmse(got, want), 1e-10)
          << (center ? "norm" : "rms_norm") << (read_again ? ", its output read again" : "");
    }
  }
}

// A decode step's FFN: the gate and up products of one column, their GLU, the down product
// and the residual add, as one pass; and the same with the products' outputs read again by
// later nodes. A backend that runs the products with the GLU, and the down product with the
// add, as one kernel each (Vulkan's mul_mat_vec GLU and ADD variants) must give the numbers
// of its separate kernels (`each_node`: every node's output read back, so nothing is fused),
// and must not fuse where the outputs are needed.
// m rows of k Gaussian values (from `seed`) as type t, placed where `be` computes.
TensorView gaussian_rows(Backend& be, std::vector<std::unique_ptr<Buffer>>& owned, DType t, int64_t k,
                         int64_t m, uint32_t seed) {
  const std::span<const float> v = gaussian(static_cast<size_t>(k * m), seed);
  std::vector<uint8_t> bytes;
  for (int64_t r = 0; r < m; ++r) {
    const std::vector<uint8_t> row =
        quantize(t, v.subspan(static_cast<size_t>(r * k), static_cast<size_t>(k)));
    bytes.insert(bytes.end(), row.begin(), row.end());
  }
  const Placed p = std::move(place(be, std::move(bytes), owned)).value();
  return TensorView::in_buffer(*p.buffer, p.offset, t, {k, m});
}

// The output of a pass as the host reads it.
std::vector<float> read_f32(const TensorView& v) {
  std::vector<float> got(static_cast<size_t>(v.n_elements()));
  v.buffer->get(v.offset, {reinterpret_cast<uint8_t*>(got.data()), got.size() * sizeof(float)});
  return got;
}

std::vector<float> decode_ffn(Backend& be, DType type, Op glu, bool read_again, bool each_node) {
  constexpr int64_t kEmbd = 256;
  constexpr int64_t kFf = 512;
  std::vector<std::unique_ptr<Buffer>> owned;
  uint32_t seed = 3;
  const auto put = [&](DType t, int64_t k, int64_t m) { return gaussian_rows(be, owned, t, k, m, seed++); };
  const TensorView wg = put(type, kEmbd, kFf), wu = put(type, kEmbd, kFf), wd = put(type, kFf, kEmbd);
  const TensorView x = put(DType::kF32, kEmbd, 1), r = put(DType::kF32, kEmbd, 1);
  Graph g;
  const TensorView gate = g.mul_mat(wg, x, "ffn_gate");
  const TensorView up = g.mul_mat(wu, x, "ffn_up");
  TensorView h = glu == Op::kSwiglu ? g.swiglu(gate, up, "ffn_swiglu") : g.geglu(gate, up, "ffn_geglu");
  if (read_again) h = g.add(h, up, "ffn_plus_up");
  const TensorView down = g.mul_mat(wd, h, "ffn_down");
  TensorView out = g.add(r, down, "l_out");
  if (read_again) out = g.add(out, down, "l_out_plus_down");
  run_pass(be, g, each_node);
  return read_f32(out);
}

TEST_P(BackendPasses, DecodeFfnMatchesRefFusedOrNot) {
  for (DType type : {DType::kQ4_K, DType::kQ6_K, DType::kQ8_0, DType::kQ4_0}) {
    for (Op glu : {Op::kSwiglu, Op::kGeglu}) {
      for (bool read_again : {false, true}) {
        const std::string what = std::string(dtype_name(type)) + " " + std::string(op_name(glu)) +
                                 (read_again ? ", outputs read again" : "");
        const std::vector<float> want = decode_ffn(*ref_, type, glu, read_again, false);
        const std::vector<float> got = decode_ffn(*be_, type, glu, read_again, false);
        const std::vector<float> apart = decode_ffn(*be_, type, glu, read_again, true);
        // ref quantizes the activations (as ggml's CPU does); GPU products read them in F32.
        EXPECT_LE(nmse(got, want), 2e-3) << what;
        EXPECT_LE(nmse(got, apart), 1e-12) << what << ": fused and separate kernels differ";
      }
    }
  }
}

// An attention block's inputs: the norm of `columns` columns times its weight row, read by
// two products (q and k); and the same with the norm's output read again by a later node. A
// backend that quantizes the norm's output for integer-dot products in the norm's own kernel
// (Vulkan's rms_norm_mul_q8_*) must give the numbers of its separate kernels (`each_node`).
std::vector<float> normed_products(Backend& be, DType type, int64_t k, int64_t columns, bool read_again,
                                   bool each_node) {
  constexpr int64_t kRows = 64;
  std::vector<std::unique_ptr<Buffer>> owned;
  const TensorView x = gaussian_rows(be, owned, DType::kF32, k, columns, 1);
  const TensorView w = gaussian_rows(be, owned, DType::kF32, k, 1, 2);
  const TensorView wq = gaussian_rows(be, owned, type, k, kRows, 3);
  const TensorView wk = gaussian_rows(be, owned, type, k, kRows, 4);
  Graph g;
  const TensorView n = g.mul(g.rms_norm(x, 1e-5f, "norm"),
                             TensorView::in_buffer(*w.buffer, w.offset, DType::kF32, {k}), "attn_norm");
  TensorView out = g.add(g.mul_mat(wq, n, "q"), g.mul_mat(wk, n, "k"), "q_plus_k");
  if (read_again) {
    out = g.add(g.mul_mat(wq, g.add(n, n, "twice"), "q2"), out, "sum");
  }
  run_pass(be, g, each_node);
  return read_f32(out);
}

TEST_P(BackendPasses, NormedProductsMatchRefFusedOrNot) {
  // One quantizer each (Q8_K, Q8_1, Q8_0); decode's one column, several sequences' three,
  // a prompt's 17; a row of 8448 values takes the norm's workgroup two rounds of blocks.
  for (DType type : {DType::kQ4_K, DType::kQ4_1, DType::kQ8_0}) {
    for (int64_t columns : {1, 3, 17}) {
      for (int64_t k : {int64_t{512}, int64_t{8448}}) {
        for (bool read_again : {false, true}) {
          if (k > 512 && (columns > 1 || read_again)) continue;
          const std::string what = std::string(dtype_name(type)) + " k=" + std::to_string(k) + ", " +
                                   std::to_string(columns) + " columns" +
                                   (read_again ? ", norm read again" : "");
          const std::vector<float> want = normed_products(*ref_, type, k, columns, read_again, false);
          const std::vector<float> got = normed_products(*be_, type, k, columns, read_again, false);
          const std::vector<float> apart = normed_products(*be_, type, k, columns, read_again, true);
          EXPECT_LE(nmse(got, want), 2e-3) << what;
          EXPECT_LE(nmse(got, apart), 1e-12) << what << ": fused and separate kernels differ";
        }
      }
    }
  }
}

// A layer's K written to its cache: the rope of `tokens` tokens' heads, copied into F16 (or
// F32) cells, as one pass. A backend that ropes straight into the cache (Vulkan's rope_f16)
// must give ref's numbers, and those of its separate kernels (`each_node`).
std::vector<float> rope_into_cache(Backend& be, DType cache, int64_t tokens, bool each_node) {
  constexpr int64_t kHeadDim = 64, kHeads = 4;
  std::vector<std::unique_ptr<Buffer>> owned;
  const TensorView x = gaussian_rows(be, owned, DType::kF32, kHeadDim * kHeads, tokens, 5);
  std::vector<int32_t> pos(static_cast<size_t>(tokens));
  for (size_t t = 0; t < pos.size(); ++t) pos[t] = static_cast<int32_t>(7 + 3 * t);
  const RopeParams rp{.mode = RopeMode::kNeox, .n_dims = 48};  // 16 dims a head pass through
  Graph g;
  const TensorView k = g.rope(x.reshape({kHeadDim, kHeads, tokens}), pos, rp, std::nullopt, "Kcur");
  const TensorView cells = g.tensor(cache, {kHeadDim, kHeads, tokens});
  g.copy(k, cells, "k_cache");  // the pass's result
  run_pass(be, g, each_node);
  if (cache == DType::kF32) return read_f32(cells);
  std::vector<uint16_t> halves(static_cast<size_t>(cells.n_elements()));
  cells.buffer->get(cells.offset, {reinterpret_cast<uint8_t*>(halves.data()), halves.size() * 2});
  std::vector<float> got;
  for (uint16_t h : halves) got.push_back(fp16_to_f32(h));
  return got;
}

TEST_P(BackendPasses, RopeIntoCacheMatchesRefFusedOrNot) {
  for (DType cache : {DType::kF16, DType::kF32}) {
    for (int64_t tokens : {1, 5}) {
      const std::string what = std::string(dtype_name(cache)) + ", " + std::to_string(tokens) + " tokens";
      const std::vector<float> want = rope_into_cache(*ref_, cache, tokens, false);
      const std::vector<float> got = rope_into_cache(*be_, cache, tokens, false);
      const std::vector<float> apart = rope_into_cache(*be_, cache, tokens, true);
      EXPECT_LE(nmse(got, want), 1e-10) << what;
      EXPECT_EQ(got, apart) << what << ": fused and separate kernels differ";
    }
  }
}

std::string backend_name(const ::testing::TestParamInfo<size_t>& info) {
  return backends_under_test()[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(Every, BackendPasses, ::testing::Range<size_t>(0, backends_under_test().size()),
                         backend_name);

std::string isa_name(const ::testing::TestParamInfo<CpuIsa>& info) {
  return std::string(cpu_isa_name(info.param));
}

// The cpu backend's own promise (cpu_backend.h): the thread count changes no bit. Checked on
// the ops whose work split (and so summation order) could follow it; the others give each
// row to one thread.
class CpuThreadCount : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(CpuThreadCount, ChangesNoBit) {
  Result<std::unique_ptr<Backend>> one = make_cpu_backend(1, GetParam());
  if (!one.ok()) GTEST_SKIP() << "SKIPPED LOUDLY: " << one.status().to_string();
  Target a, b;
  a.be = std::move(one).value();
  b.be = std::move(make_cpu_backend(3, GetParam())).value();
  const std::unique_ptr<Backend> ref = make_ref_backend();
  for (Op op : {Op::kMulMat, Op::kAttention}) {
    for (const Case& c : make_cases(op, oracle_types(op, *ref, *a.be))) {
      const Inputs in = make_inputs(c);
      const Result<std::vector<uint8_t>> x = run_case(a, c, in);
      const Result<std::vector<uint8_t>> y = run_case(b, c, in);
      ASSERT_TRUE(x.ok() && y.ok()) << c.name() << ": " << x.status().to_string() << y.status().to_string();
      EXPECT_TRUE(*x == *y) << c.name() << ": 1 and 3 threads differ";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, CpuThreadCount,
                         ::testing::Values(CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512), isa_name);

}  // namespace
}  // namespace paddock
