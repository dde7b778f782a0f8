// The backend seam: tensor views and the ops the models need. A model computes by calling
// these ops on views over buffers it owns; it never touches element layouts itself.
// Invariants: views use ggml's order (ne[0] innermost, nb[] byte strides; for block types
// nb[0] is the block size in bytes and rows are whole blocks). Outputs are F32 unless an op
// says otherwise and never alias inputs (except add/mul, which may write in place). Shape
// mismatches are caller bugs (PADDOCK_CHECK), since models validate shapes at load.
//   std::unique_ptr<Backend> be = make_ref_backend();
//   be->mul_mat(w, x, out);  // w [K, M] any supported type, x [K, N] F32 -> out [M, N] F32
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "tensor/dtype.h"

namespace paddock {

struct TensorView {
  void* data = nullptr;
  DType type = DType::kF32;
  std::array<int64_t, 4> ne{1, 1, 1, 1};
  std::array<size_t, 4> nb{0, 0, 0, 0};

  // A contiguous view; ne[0] must be a whole number of blocks of `type`.
  static TensorView contiguous(void* data, DType type, std::initializer_list<int64_t> ne);
  // Weights live in a read-only mapping; backends never write to input views.
  static TensorView weight(const void* data, DType type, std::initializer_list<int64_t> ne) {
    return contiguous(const_cast<void*>(data), type, ne);
  }

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  bool is_contiguous() const;
  bool same_shape(const TensorView& o) const { return ne == o.ne; }
  // Address of the row (i1, i2, i3): ne[0] elements of `type`.
  uint8_t* row(int64_t i1, int64_t i2 = 0, int64_t i3 = 0) const {
    return static_cast<uint8_t*>(data) + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
  }
  // Element (i0, i1, i2, i3) of an F32 view.
  float& f32(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
    return *reinterpret_cast<float*>(row(i1, i2, i3) + i0 * nb[0]);
  }
  // The same bytes seen with other dimensions (contiguous views only).
  TensorView reshape(std::initializer_list<int64_t> new_ne) const;
};

enum class RopeMode : uint8_t {
  kNormal,  // rotates pairs (x[2i], x[2i+1]): Llama
  kNeox,    // rotates pairs (x[i], x[i + n_dims/2]): Qwen2/3, GPT-NeoX
};

// ggml_rope_ext without YaRN: theta_i = pos * freq_scale * freq_base^(-2i/n_dims) / factor_i.
struct RopeParams {
  RopeMode mode = RopeMode::kNormal;
  int32_t n_dims = 0;  // leading dims of each head that rotate; the rest pass through
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  std::span<const float> freq_factors;  // empty, or n_dims/2 divisors (rope_freqs.weight)
};

// The op table. Adding an op = enum value + row in kOpNames + a virtual below + ref kernel.
enum class Op : uint8_t {
  kGetRows,
  kMulMat,
  kRmsNorm,
  kMul,
  kAdd,
  kRope,
  kSwiglu,
  kSoftmax,
  kAttention,
  kCopy,
  kCount,
};
inline constexpr size_t kOpCount = static_cast<size_t>(Op::kCount);
inline constexpr std::array<std::string_view, kOpCount> kOpNames = {
    "get_rows", "mul_mat", "rms_norm", "mul", "add", "rope", "swiglu", "softmax", "attention", "copy",
};
static_assert(kOpNames.size() == kOpCount, "one name per op");
inline std::string_view op_name(Op op) { return kOpNames[static_cast<size_t>(op)]; }

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Whether `op` runs with these input types (in the argument order of the op below).
  virtual bool supports(Op op, std::span<const DType> types) const = 0;

  // dst[:, i] = table[:, ids[i]] as F32. table [n, n_rows] any type; dst [n, ids.size()].
  virtual void get_rows(const TensorView& table, std::span<const int32_t> ids, const TensorView& dst) = 0;
  // dst[m, j] = sum_k w[k, m] * x[k, j]. w [K, M] any type; x [K, N, B] F32; dst [M, N, B].
  virtual void mul_mat(const TensorView& w, const TensorView& x, const TensorView& dst) = 0;
  // Each row divided by its RMS: x / sqrt(mean(x^2) + eps). x, dst F32, same shape.
  virtual void rms_norm(const TensorView& x, float eps, const TensorView& dst) = 0;
  // Elementwise with b repeated along every dim where it is smaller (ne_a % ne_b == 0).
  virtual void mul(const TensorView& a, const TensorView& b, const TensorView& dst) = 0;
  virtual void add(const TensorView& a, const TensorView& b, const TensorView& dst) = 0;
  // x [head_dim, n_head, n_tokens] F32; pos[t] is token t's position.
  virtual void rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
                    const TensorView& dst) = 0;
  // dst = silu(gate) * up, all F32 of one shape.
  virtual void swiglu(const TensorView& gate, const TensorView& up, const TensorView& dst) = 0;
  // Softmax of each row (along ne[0]) of x * scale.
  virtual void softmax(const TensorView& x, float scale, const TensorView& dst) = 0;
  // Causal attention with grouped KV heads over one sequence's cache. q [d_k, n_head,
  // n_tokens] F32; k [d_k, n_head_kv, n_kv] and v [d_v, n_head_kv, n_kv] of one type: F16,
  // F32, Q8_0 or Q4_0 (block types need d_k, d_v whole blocks; rows are llama.cpp's block
  // layout); cache cells 0..n_kv-1, cell = position; token t sees cells j <= pos[t]; query
  // head h uses kv head h / (n_head / n_head_kv). A batch of several sequences calls this
  // once per sequence with that sequence's tokens and cache.
  // dst [d_v, n_head, n_tokens] = softmax(scale * q.k) v.
  virtual void attention(const TensorView& q, const TensorView& k, const TensorView& v,
                         std::span<const int32_t> pos, float scale, const TensorView& dst) = 0;
  // dst = src converted to dst's type (F32, F16 or BF16), same shape, any strides.
  virtual void copy(const TensorView& src, const TensorView& dst) = 0;

  // Promises that `bytes` (a model file's tensor data) stay mapped and unchanged for this
  // backend's lifetime, so it may keep faster layouts of weight matrices that lie inside
  // them. release_pages: the bytes are a read-only file mapping, so pages whose weights were
  // copied may be dropped from memory (touching them again re-reads the file).
  virtual void pin_weights(std::span<const uint8_t> bytes, bool release_pages) {
    static_cast<void>(bytes);
    static_cast<void>(release_pages);
  }
  // w, a weight matrix inside pinned bytes, will be multiplied (mul_mat's w): the backend may
  // build its faster layout now, at load time, instead of at the first multiplication.
  virtual void prepare_weight(const TensorView& w) { static_cast<void>(w); }
};

}  // namespace paddock
