#include "backend/eager.h"

#include <string>

#include "backend/graph.h"
#include "base/check.h"

namespace paddock::eager {

namespace {

void run(Backend& be, Op op, std::initializer_list<TensorView> src, const TensorView& dst,
         std::span<const int32_t> ids = {}, float scalar = 0, const RopeParams& rope = {}) {
  Node n;
  n.op = op;
  n.name = std::string(op_name(op));
  n.dst = dst;
  for (const TensorView& s : src) n.src[n.n_src++] = s;
  n.ids = ids;
  n.scalar = scalar;
  n.rope = rope;
  Graph g;
  g.add_node(std::move(n));
  const Status st = be.compute(g);
  PADDOCK_CHECK_MSG(st.is_ok(), st.message().c_str());
}

}  // namespace

void get_rows(Backend& be, const TensorView& table, std::span<const int32_t> ids, const TensorView& dst) {
  run(be, Op::kGetRows, {table}, dst, ids);
}
void mul_mat(Backend& be, const TensorView& w, const TensorView& x, const TensorView& dst) {
  run(be, Op::kMulMat, {w, x}, dst);
}
void rms_norm(Backend& be, const TensorView& x, float eps, const TensorView& dst) {
  run(be, Op::kRmsNorm, {x}, dst, {}, eps);
}
void mul(Backend& be, const TensorView& a, const TensorView& b, const TensorView& dst) {
  run(be, Op::kMul, {a, b}, dst);
}
void add(Backend& be, const TensorView& a, const TensorView& b, const TensorView& dst) {
  run(be, Op::kAdd, {a, b}, dst);
}
void rope(Backend& be, const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
          const TensorView& dst) {
  RopeParams node_params = p;
  node_params.freq_factors = {};
  if (p.freq_factors.empty()) {
    run(be, Op::kRope, {x}, dst, pos, 0, node_params);
    return;
  }
  const TensorView factors = TensorView::contiguous(const_cast<float*>(p.freq_factors.data()), DType::kF32,
                                                    {static_cast<int64_t>(p.freq_factors.size())});
  run(be, Op::kRope, {x, factors}, dst, pos, 0, node_params);
}
void swiglu(Backend& be, const TensorView& gate, const TensorView& up, const TensorView& dst) {
  run(be, Op::kSwiglu, {gate, up}, dst);
}
void attention(Backend& be, const TensorView& q, const TensorView& k, const TensorView& v,
               std::span<const int32_t> pos, float scale, const TensorView& dst) {
  attention(be, q, k, v, pos, AttnParams{.scale = scale}, std::nullopt, dst);
}
void attention(Backend& be, const TensorView& q, const TensorView& k, const TensorView& v,
               std::span<const int32_t> pos, const AttnParams& p, const std::optional<TensorView>& sinks,
               const TensorView& dst) {
  Graph g;
  g.attention(q, k, v, pos, p, sinks, dst, std::string(op_name(Op::kAttention)));
  const Status st = be.compute(g);
  PADDOCK_CHECK_MSG(st.is_ok(), st.message().c_str());
}
void copy(Backend& be, const TensorView& src, const TensorView& dst) { run(be, Op::kCopy, {src}, dst); }

}  // namespace paddock::eager
