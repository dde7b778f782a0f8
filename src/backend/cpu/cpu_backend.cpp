#include "backend/cpu/cpu_backend.h"

#include <algorithm>

#include "backend/cpu/gemm.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/repacked_weights.h"
#include "backend/host_exec.h"
#include "backend/moe.h"
#include "base/env.h"

namespace paddock {

namespace {

bool is_float_type(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

// What the kernels share: the pool, the ISA path, mul_mat's scratch and the weights'
// interleaved copies.
struct CpuContext {
  CpuContext(int n_threads, CpuIsa path) : pool(n_threads), isa(path) {}

  // w's interleaved copy, built on first use (load builds them all through prepare_weight);
  // nullptr where this path has no kernel for it or w cannot be repacked.
  const uint8_t* interleaved(const TensorView& w) {
    return cpu::gemm_kernel(isa, w.type) != nullptr ? repacked.find_or_build(pool, w) : nullptr;
  }

  ThreadPool pool;
  CpuIsa isa;
  cpu::Scratch scratch;
  cpu::RepackedWeights repacked;
};

bool rows_then_f32(std::span<const DType> types) {
  return !types.empty() && cpu::can_read_rows(types[0]) && all_f32(types.subspan(1));
}
bool mul_mat_types(std::span<const DType> types) {
  return !types.empty() && cpu::can_mul_mat(types[0]) && all_f32(types.subspan(1));
}

void run_get_rows(CpuContext& c, const Node& n) { cpu::get_rows(c.pool, n.src[0], n.ids, n.dst); }
void run_mul_mat(CpuContext& c, const Node& n) {
  cpu::mul_mat(c.pool, c.isa, c.scratch, n.src[0], c.interleaved(n.src[0]), n.src[1], n.dst);
}
void run_rms_norm(CpuContext& c, const Node& n) { cpu::rms_norm(c.pool, n.src[0], n.scalar, n.dst); }
void run_mul(CpuContext& c, const Node& n) { cpu::mul(c.pool, n.src[0], n.src[1], n.dst); }
void run_add(CpuContext& c, const Node& n) { cpu::add(c.pool, n.src[0], n.src[1], n.dst); }
void run_rope(CpuContext& c, const Node& n) { cpu::rope(c.pool, n.src[0], n.ids, n.rope, n.dst); }
void run_swiglu(CpuContext& c, const Node& n) { cpu::swiglu(c.pool, c.isa, n.src[0], n.src[1], n.dst); }
void run_geglu(CpuContext& c, const Node& n) { cpu::geglu(c.pool, n.src[0], n.src[1], n.dst); }
void run_scale(CpuContext& c, const Node& n) { cpu::scale(c.pool, n.src[0], n.scalar, n.dst); }
void run_norm(CpuContext& c, const Node& n) { cpu::norm(c.pool, n.src[0], n.scalar, n.dst); }
void run_gelu(CpuContext& c, const Node& n) { cpu::gelu(c.pool, n.src[0], n.dst); }
void run_tanh(CpuContext& c, const Node& n) { cpu::tanh(c.pool, n.src[0], n.dst); }
void run_attention(CpuContext& c, const Node& n) {
  for (const AttnSeqViews& s : attn_seq_views(n.src[0], n.src[1], n.src[2], n.ids, n.attn, n.dst)) {
    cpu::attention(c.pool, c.isa, s.q, s.k, s.v, s.pos, s.params, attention_sinks(n), s.dst);
  }
}
void run_copy(CpuContext& c, const Node& n) {
  if (is_float_type(n.src[0].type) && is_float_type(n.dst.type)) {
    cpu::copy(c.pool, c.isa, n.src[0], n.dst);
  } else {
    copy_through_f32(n.src[0], n.dst);
  }
}

void run_moe_gate(CpuContext& c, const Node& n) { cpu::moe_gate(c.pool, n.src[0], n.moe, n.dst); }
void run_mul_mat_id(CpuContext& c, const Node& n) {
  cpu::mul_mat_id(
      c.pool, c.isa, c.scratch, n.src[0], [&c](const TensorView& w) { return c.interleaved(w); }, n.src[1],
      n.src[2], n.dst);
}
void run_moe_sum(CpuContext& c, const Node& n) { cpu::moe_sum(c.pool, n.src[0], n.src[1], n.dst); }
void run_add_id(CpuContext& c, const Node& n) { cpu::add_id(c.pool, n.src[0], n.src[1], n.src[2], n.dst); }
void run_swiglu_oai(CpuContext& c, const Node& n) {
  cpu::swiglu_oai(c.pool, c.isa, n.src[0], n.src[1], n.scalar, n.scalar2, n.dst);
}

constexpr HostKernelTable<CpuContext> kKernels = {{
    {rows_then_f32, run_get_rows},
    {mul_mat_types, run_mul_mat},
    {all_f32, run_rms_norm},
    {all_f32, run_mul},
    {all_f32, run_add},
    {all_f32, run_rope},
    {all_f32, run_swiglu},
    {attention_types, run_attention},
    {supports_copy, run_copy},
    {all_f32, run_geglu},
    {all_f32, run_scale},
    {all_f32, run_norm},
    {all_f32, run_gelu},
    {all_f32, run_moe_gate},
    {mul_mat_types, run_mul_mat_id},
    {all_f32, run_moe_sum},
    {all_f32, run_add_id},
    {all_f32, run_swiglu_oai},
    {all_f32, run_tanh},
}};
static_assert(complete(kKernels), "a kernel row for every op");

class CpuBackend final : public Backend {
 public:
  CpuBackend(int n_threads, CpuIsa isa) : ctx_(n_threads, isa) {
    name_ = "cpu-" + std::string(cpu_isa_name(isa));
  }

  std::string_view name() const override { return name_; }
  Device& device() override { return host_device(); }
  bool supports(Op op, std::span<const DType> types) const override {
    return table_supports(kKernels, op, types);
  }
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                   std::span<const TensorView>) override {
    return run_host_nodes(*this, ctx_, kKernels, nodes, after);
  }
  void adopt_weight_file(std::span<const uint8_t> bytes, bool release_pages) override {
    ctx_.repacked.adopt(bytes, release_pages);
  }
  void prepare_weight(const TensorView& w, Op use) override {
    const TensorView hw = host_view(w);
    if (use == Op::kMulMat) ctx_.interleaved(hw);
    for (int64_t e = 0; use == Op::kMulMatId && e < hw.ne[2]; ++e) ctx_.interleaved(expert_matrix(hw, e));
  }

 private:
  CpuContext ctx_;
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
