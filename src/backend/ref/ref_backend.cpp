#include "backend/ref/ref_backend.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "backend/host_exec.h"
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

// The state kernels share: the optional cache of float weights converted to F32.
class RefContext {
 public:
  explicit RefContext(const RefBackendOptions& options) : options_(options) {}

  // w itself, or an F32 copy of it from the cache (made now if the budget allows).
  TensorView cached_f32(const TensorView& w) {
    if (options_.dequant_cache_bytes == 0 || w.type == DType::kF32 || ref::quantized_activations(w.type) ||
        w.ne[2] != 1 || w.ne[3] != 1) {
      return w;
    }
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

 private:
  RefBackendOptions options_;
  std::unordered_map<MatrixKey, std::vector<float>, MatrixKeyHash> cache_;
  size_t held_ = 0;
};

// The first input (a table, weights) of any readable type; the rest F32.
bool readable_then_f32(std::span<const DType> types) {
  return !types.empty() && ref::can_read_rows(types[0]) && all_f32(types.subspan(1));
}

void run_get_rows(RefContext&, const Node& n) { ref::get_rows(n.src[0], n.ids, n.dst); }
void run_mul_mat(RefContext& c, const Node& n) { ref::mul_mat(c.cached_f32(n.src[0]), n.src[1], n.dst); }
void run_rms_norm(RefContext&, const Node& n) { ref::rms_norm(n.src[0], n.scalar, n.dst); }
void run_mul(RefContext&, const Node& n) { ref::mul(n.src[0], n.src[1], n.dst); }
void run_add(RefContext&, const Node& n) { ref::add(n.src[0], n.src[1], n.dst); }
void run_rope(RefContext&, const Node& n) { ref::rope(n.src[0], n.ids, n.rope, n.dst); }
void run_swiglu(RefContext&, const Node& n) { ref::swiglu(n.src[0], n.src[1], n.dst); }
void run_geglu(RefContext&, const Node& n) { ref::geglu(n.src[0], n.src[1], n.dst); }
void run_scale(RefContext&, const Node& n) { ref::scale(n.src[0], n.scalar, n.dst); }
void run_norm(RefContext&, const Node& n) { ref::norm(n.src[0], n.scalar, n.dst); }
void run_gelu(RefContext&, const Node& n) { ref::gelu(n.src[0], n.dst); }
void run_tanh(RefContext&, const Node& n) { ref::tanh(n.src[0], n.dst); }
void run_attention(RefContext&, const Node& n) {
  for (const AttnSeqViews& s : attn_seq_views(n.src[0], n.src[1], n.src[2], n.ids, n.attn, n.dst)) {
    ref::attention(s.q, s.k, s.v, s.pos, s.params, attention_sinks(n), s.dst);
  }
}
void run_copy(RefContext&, const Node& n) {
  if (is_float_type(n.src[0].type) && is_float_type(n.dst.type)) {
    ref::copy(n.src[0], n.dst);
  } else {
    copy_through_f32(n.src[0], n.dst);
  }
}

void run_moe_gate(RefContext&, const Node& n) { ref::moe_gate(n.src[0], n.moe, n.dst); }
void run_mul_mat_id(RefContext&, const Node& n) { ref::mul_mat_id(n.src[0], n.src[1], n.src[2], n.dst); }
void run_moe_sum(RefContext&, const Node& n) { ref::moe_sum(n.src[0], n.src[1], n.dst); }
void run_add_id(RefContext&, const Node& n) { ref::add_id(n.src[0], n.src[1], n.src[2], n.dst); }
void run_swiglu_oai(RefContext&, const Node& n) {
  ref::swiglu_oai(n.src[0], n.src[1], n.scalar, n.scalar2, n.dst);
}

constexpr HostKernelTable<RefContext> kKernels = {{
    {readable_then_f32, run_get_rows},
    {readable_then_f32, run_mul_mat},
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
    {readable_then_f32, run_mul_mat_id},
    {all_f32, run_moe_sum},
    {all_f32, run_add_id},
    {all_f32, run_swiglu_oai},
    {all_f32, run_tanh},
}};
static_assert(complete(kKernels), "a kernel row for every op");

class RefBackend final : public Backend {
 public:
  explicit RefBackend(const RefBackendOptions& options) : ctx_(options) {}

  std::string_view name() const override { return "ref"; }
  Device& device() override { return host_device(); }
  bool supports(Op op, std::span<const DType> types) const override {
    return table_supports(kKernels, op, types);
  }
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                   std::span<const TensorView>) override {
    return run_host_nodes(*this, ctx_, kKernels, nodes, after);
  }

 private:
  RefContext ctx_;
};

}  // namespace

std::unique_ptr<Backend> make_ref_backend(const RefBackendOptions& options) {
  return std::make_unique<RefBackend>(options);
}

}  // namespace paddock
