#include "backend/cpu/cpu_backend.h"

#include <algorithm>

#include "backend/cpu/gemm.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/repacked_weights.h"
#include "base/env.h"

namespace paddock {

namespace {

bool is_float_type(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

class CpuBackend final : public Backend {
 public:
  CpuBackend(int n_threads, CpuIsa isa) : pool_(n_threads), isa_(isa) {
    name_ = "cpu-" + std::string(cpu_isa_name(isa));
  }

  std::string_view name() const override { return name_; }

  bool supports(Op op, std::span<const DType> types) const override {
    auto all = [&](auto pred) { return std::all_of(types.begin(), types.end(), pred); };
    auto f32 = [](DType t) { return t == DType::kF32; };
    switch (op) {
      case Op::kGetRows:
        return !types.empty() && cpu::can_read_rows(types[0]) &&
               std::all_of(types.begin() + 1, types.end(), f32);
      case Op::kMulMat:
        return !types.empty() && cpu::can_mul_mat(types[0]) &&
               std::all_of(types.begin() + 1, types.end(), f32);
      case Op::kAttention:
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
    cpu::get_rows(pool_, table, ids, dst);
  }
  void mul_mat(const TensorView& w, const TensorView& x, const TensorView& dst) override {
    cpu::mul_mat(pool_, isa_, scratch_, w, interleaved(w), x, dst);
  }
  void rms_norm(const TensorView& x, float eps, const TensorView& dst) override {
    cpu::rms_norm(pool_, x, eps, dst);
  }
  void mul(const TensorView& a, const TensorView& b, const TensorView& dst) override {
    cpu::mul(pool_, a, b, dst);
  }
  void add(const TensorView& a, const TensorView& b, const TensorView& dst) override {
    cpu::add(pool_, a, b, dst);
  }
  void rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
            const TensorView& dst) override {
    cpu::rope(pool_, x, pos, p, dst);
  }
  void swiglu(const TensorView& gate, const TensorView& up, const TensorView& dst) override {
    cpu::swiglu(pool_, isa_, gate, up, dst);
  }
  void softmax(const TensorView& x, float scale, const TensorView& dst) override {
    cpu::softmax(pool_, x, scale, dst);
  }
  void attention(const TensorView& q, const TensorView& k, const TensorView& v, std::span<const int32_t> pos,
                 float scale, const TensorView& dst) override {
    cpu::attention(pool_, isa_, q, k, v, pos, scale, dst);
  }
  void copy(const TensorView& src, const TensorView& dst) override { cpu::copy(pool_, isa_, src, dst); }
  void pin_weights(std::span<const uint8_t> bytes, bool release_pages) override {
    repacked_.pin(bytes, release_pages);
  }
  void prepare_weight(const TensorView& w) override { interleaved(w); }

 private:
  // w's interleaved copy, built on first use (load builds them all through prepare_weight);
  // nullptr where this path has no kernel for it or w cannot be repacked.
  const uint8_t* interleaved(const TensorView& w) {
    return cpu::gemm_kernel(isa_, w.type) != nullptr ? repacked_.find_or_build(pool_, w) : nullptr;
  }

  ThreadPool pool_;
  CpuIsa isa_;
  cpu::Scratch scratch_;
  cpu::RepackedWeights repacked_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Backend>> make_cpu_backend(int n_threads, CpuIsa isa) {
  if (!cpu_has_isa(isa)) {
    return unsupported("cpu backend: path " + std::string(cpu_isa_name(isa)) +
                       " needs instructions this CPU lacks (best available: " +
                       std::string(cpu_isa_name(best_cpu_isa())) + ")");
  }
  return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(n_threads, isa));
}

Result<std::unique_ptr<Backend>> make_cpu_backend(int n_threads) {
  PADDOCK_ASSIGN(const CpuIsa isa, select_cpu_isa(env_get("CPU")));
  return make_cpu_backend(n_threads, isa);
}

}  // namespace paddock
