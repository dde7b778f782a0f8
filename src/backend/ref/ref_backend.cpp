#include "backend/ref/ref_backend.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "backend/ref/kernels.h"

namespace paddock {

namespace {

bool is_float_type(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

// Identifies a weight matrix by where it lives and how it is laid out.
struct MatrixKey {
  const void* data;
  DType type;
  int64_t ne0, ne1;
  size_t nb1;
  bool operator==(const MatrixKey&) const = default;
};
struct MatrixKeyHash {
  size_t operator()(const MatrixKey& k) const {
    return std::hash<const void*>()(k.data) ^ (static_cast<size_t>(k.ne1) * 0x9e3779b97f4a7c15ull);
  }
};

class RefBackend final : public Backend {
 public:
  explicit RefBackend(const RefBackendOptions& options) : options_(options) {}

  std::string_view name() const override { return "ref"; }

  bool supports(Op op, std::span<const DType> types) const override {
    auto all = [&](auto pred) { return std::all_of(types.begin(), types.end(), pred); };
    auto f32 = [](DType t) { return t == DType::kF32; };
    switch (op) {
      case Op::kGetRows:
      case Op::kMulMat:
        // The first input (the table / weights) may be any readable type; the rest F32.
        return !types.empty() && ref::can_read_rows(types[0]) &&
               std::all_of(types.begin() + 1, types.end(), f32);
      case Op::kAttention:
        // q F32; k and v of a KV cache type: F16, F32, Q8_0 or Q4_0.
        return !types.empty() && types[0] == DType::kF32 &&
               std::all_of(types.begin() + 1, types.end(), [](DType t) {
                 return t == DType::kF32 || t == DType::kF16 || t == DType::kQ8_0 || t == DType::kQ4_0;
               });
      case Op::kCopy: return all(is_float_type);
      case Op::kRmsNorm:
      case Op::kMul:
      case Op::kAdd:
      case Op::kRope:
      case Op::kSwiglu:
      case Op::kSoftmax: return all(f32);
      case Op::kCount: break;
    }
    return false;
  }

  void get_rows(const TensorView& table, std::span<const int32_t> ids, const TensorView& dst) override {
    ref::get_rows(table, ids, dst);
  }
  void mul_mat(const TensorView& w, const TensorView& x, const TensorView& dst) override {
    ref::mul_mat(cached_f32(w), x, dst);
  }
  void rms_norm(const TensorView& x, float eps, const TensorView& dst) override {
    ref::rms_norm(x, eps, dst);
  }
  void mul(const TensorView& a, const TensorView& b, const TensorView& dst) override { ref::mul(a, b, dst); }
  void add(const TensorView& a, const TensorView& b, const TensorView& dst) override { ref::add(a, b, dst); }
  void rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
            const TensorView& dst) override {
    ref::rope(x, pos, p, dst);
  }
  void swiglu(const TensorView& gate, const TensorView& up, const TensorView& dst) override {
    ref::swiglu(gate, up, dst);
  }
  void softmax(const TensorView& x, float scale, const TensorView& dst) override {
    ref::softmax(x, scale, dst);
  }
  void attention(const TensorView& q, const TensorView& k, const TensorView& v, std::span<const int32_t> pos,
                 float scale, const TensorView& dst) override {
    ref::attention(q, k, v, pos, scale, dst);
  }
  void copy(const TensorView& src, const TensorView& dst) override { ref::copy(src, dst); }

 private:
  // w itself, or an F32 copy of it from the cache (made now if the budget allows).
  TensorView cached_f32(const TensorView& w) {
    if (options_.dequant_cache_bytes == 0 || w.type == DType::kF32 || w.ne[2] != 1 || w.ne[3] != 1) return w;
    const MatrixKey key{w.data, w.type, w.ne[0], w.ne[1], w.nb[1]};
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      const size_t bytes = static_cast<size_t>(w.ne[0] * w.ne[1]) * sizeof(float);
      if (bytes > options_.dequant_cache_bytes - held_) return w;
      std::vector<float> f(static_cast<size_t>(w.ne[0] * w.ne[1]));
      for (int64_t r = 0; r < w.ne[1]; ++r)
        ref::read_row(w.type, w.row(r), &f[static_cast<size_t>(r * w.ne[0])], w.ne[0]);
      held_ += bytes;
      it = cache_.emplace(key, std::move(f)).first;
    }
    return TensorView::contiguous(it->second.data(), DType::kF32, {w.ne[0], w.ne[1]});
  }

  RefBackendOptions options_;
  std::unordered_map<MatrixKey, std::vector<float>, MatrixKeyHash> cache_;
  size_t held_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_ref_backend(const RefBackendOptions& options) {
  return std::make_unique<RefBackend>(options);
}

}  // namespace paddock
