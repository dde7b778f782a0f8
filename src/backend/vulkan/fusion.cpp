#include "backend/vulkan/fusion.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace paddock {

const uint8_t* host_address(const TensorView& v) {
  if (v.data != nullptr) return static_cast<const uint8_t*>(v.data);
  return v.buffer != nullptr && v.buffer->host() != nullptr ? v.buffer->host() + v.offset : nullptr;
}

bool overlaps(const TensorView& a, const TensorView& b) {
  if (a.buffer != nullptr && b.buffer != nullptr && &a.buffer->storage() == &b.buffer->storage()) {
    return a.offset < b.offset + b.extent() && b.offset < a.offset + a.extent();
  }
  const uint8_t* pa = host_address(a);
  const uint8_t* pb = host_address(b);
  return pa != nullptr && pb != nullptr && pa < pb + b.extent() && pb < pa + a.extent();
}

namespace {

bool same_view(const TensorView& a, const TensorView& b) {
  return a.buffer != nullptr && a.buffer == b.buffer && a.offset == b.offset && a.ne == b.ne && a.nb == b.nb;
}

// Whether no node after nodes[last] reads v, nodes[producer]'s output (before a node writes
// over it), and no result holds it (unless a node after the producer wrote that result: the
// logits, over v's freed bytes).
bool unread_after(std::span<const Node> nodes, size_t producer, size_t last, const TensorView& v,
                  std::span<const TensorView> results) {
  // v's bytes that no later node has written over yet, as [first, end) ranges.
  std::vector<std::pair<size_t, size_t>> live = {{v.offset, v.offset + v.extent()}}, left;
  const Buffer& storage = v.buffer->storage();
  const auto reads_live = [&](const TensorView& r) {
    if (r.buffer == nullptr || &r.buffer->storage() != &storage) return overlaps(r, v);
    return std::any_of(live.begin(), live.end(),
                       [&](const auto& l) { return r.offset < l.second && l.first < r.offset + r.extent(); });
  };
  for (size_t j = last + 1; j < nodes.size() && !live.empty(); ++j) {
    for (const TensorView& src : nodes[j].inputs()) {
      if (reads_live(src)) return false;
    }
    const TensorView& out = nodes[j].dst;  // a strided output leaves the bytes between its rows
    if (out.buffer == nullptr || &out.buffer->storage() != &storage || !out.is_contiguous()) continue;
    left.clear();  // live minus [out.offset, out.offset + extent)
    for (const auto& [lo, hi] : live) {
      if (lo < out.offset) left.emplace_back(lo, std::min(hi, out.offset));
      if (hi > out.offset + out.extent()) left.emplace_back(std::max(lo, out.offset + out.extent()), hi);
    }
    live.swap(left);
  }
  const auto written_later = [&](const TensorView& r) {
    return std::any_of(nodes.begin() + static_cast<std::ptrdiff_t>(producer) + 1, nodes.end(),
                       [&](const Node& n) { return same_view(n.dst, r); });
  };
  return std::none_of(results.begin(), results.end(),
                      [&](const TensorView& r) { return reads_live(r) && !written_later(r); });
}

// A norm, then the multiply of its output (first input) by a row [n] (second input).
bool norm_then_weight(const Node& norm, const Node& mul) {
  if ((norm.op != Op::kRmsNorm && norm.op != Op::kNorm) || mul.op != Op::kMul || norm.dst.buffer == nullptr) {
    return false;
  }
  const TensorView& x = mul.src[0];
  const TensorView& w = mul.src[1];
  return same_view(x, norm.dst) && mul.dst.same_shape(x) && w.ne[0] == x.ne[0] && w.ne[1] == 1 &&
         w.ne[2] == 1 && w.ne[3] == 1;
}

// A decode product, then the add of its output to another tensor of the same shape (no
// broadcast), whose output overlaps neither the product's inputs (other workgroups read them
// while one writes) nor that tensor (unless in place: each element is read, then written, by
// one invocation). Returns the other tensor's index in the add, or -1.
int product_then_add(const Node& mm, const Node& add, const DeviceTraits& traits) {
  if (mm.op != Op::kMulMat || add.op != Op::kAdd || mm.dst.buffer == nullptr ||
      !mat_vec_product(mm, traits)) {
    return -1;
  }
  const int other = same_view(add.src[0], mm.dst) ? 1 : same_view(add.src[1], mm.dst) ? 0 : -1;
  if (other < 0) return -1;
  const TensorView& r = add.src[static_cast<size_t>(other)];
  if (!r.same_shape(mm.dst) || !add.dst.same_shape(mm.dst) || overlaps(add.dst, mm.src[0]) ||
      overlaps(add.dst, mm.src[1]) || (overlaps(add.dst, r) && !same_view(add.dst, r))) {
    return -1;
  }
  return other;
}

// The gate and up decode products of one input, then their GLU (swiglu or geglu), whose
// output overlaps none of the products' inputs.
bool products_then_glu(const Node& gate, const Node& up, const Node& glu, const DeviceTraits& traits) {
  if (gate.op != Op::kMulMat || up.op != Op::kMulMat || (glu.op != Op::kSwiglu && glu.op != Op::kGeglu) ||
      gate.dst.buffer == nullptr || up.dst.buffer == nullptr || !mat_vec_product(gate, traits) ||
      !mat_vec_product(up, traits)) {
    return false;
  }
  const TensorView& wg = gate.src[0];
  const TensorView& wu = up.src[0];
  return same_view(gate.src[1], up.src[1]) && wg.type == wu.type && wg.ne == wu.ne &&
         same_view(glu.src[0], gate.dst) && same_view(glu.src[1], up.dst) && glu.dst.same_shape(gate.dst) &&
         !overlaps(glu.dst, wg) && !overlaps(glu.dst, wu) && !overlaps(glu.dst, gate.src[1]);
}

// A rope, then the copy of its output into a tensor of its shape in F32 or F16 (a layer's K
// cache cells) that overlaps none of the rope's inputs.
bool rope_then_copy(const Node& rope, const Node& copy) {
  if (rope.op != Op::kRope || copy.op != Op::kCopy || rope.dst.buffer == nullptr) return false;
  const TensorView& to = copy.dst;
  return same_view(copy.src[0], rope.dst) && to.same_shape(rope.dst) &&
         (to.type == DType::kF16 || to.type == DType::kF32) && !overlaps(to, rope.src[0]) &&
         (rope.n_src < 2 || !overlaps(to, rope.src[1]));
}

}  // namespace

size_t fused_nodes(std::span<const Node> nodes, size_t i, std::span<const TensorView> results,
                   const DeviceTraits& traits, Node& out) {
  if (i + 1 >= nodes.size()) return 1;
  const Node& a = nodes[i];
  const Node& b = nodes[i + 1];
  if (norm_then_weight(a, b) && unread_after(nodes, i, i + 1, a.dst, results)) {
    out = a;
    out.src[1] = b.src[1];
    out.n_src = 2;
    out.dst = b.dst;
    return 2;
  }
  if (rope_then_copy(a, b) && unread_after(nodes, i, i + 1, a.dst, results)) {
    out = a;
    out.dst = b.dst;
    return 2;
  }
  const int other = product_then_add(a, b, traits);
  if (other >= 0 && unread_after(nodes, i, i + 1, a.dst, results)) {
    out = a;
    out.src[2] = b.src[static_cast<size_t>(other)];
    out.n_src = 3;
    out.dst = b.dst;
    return 2;
  }
  if (i + 2 < nodes.size()) {
    const Node& glu = nodes[i + 2];
    const bool gate_first = products_then_glu(a, b, glu, traits);
    // Either product may come first; the shape checks go before unread_after's scan of the
    // rest of the pass, which for every node would cost the pass quadratic time.
    if ((gate_first || products_then_glu(b, a, glu, traits)) &&
        unread_after(nodes, i, i + 2, a.dst, results) && unread_after(nodes, i + 1, i + 2, b.dst, results)) {
      out = glu;
      out.src = {(gate_first ? a : b).src[0], a.src[1], (gate_first ? b : a).src[0], TensorView{}};
      out.n_src = 3;
      return 3;
    }
  }
  return 1;
}

const Node* int_dot_reader(std::span<const Node> nodes, size_t i, const TensorView& out,
                           const DeviceTraits& traits) {
  constexpr size_t kLookahead = 4;  // past a norm: its weight's multiply, a router's product
  if (out.buffer == nullptr || out.ne[3] != 1) return nullptr;
  for (size_t j = i + 1; j < nodes.size() && j <= i + kLookahead; ++j) {
    const Node& n = nodes[j];
    if (n.op == Op::kMulMat && same_view(n.src[1], out) && int_dot_product(n, traits)) return &n;
    if (n.dst.buffer != nullptr && overlaps(n.dst, out)) return nullptr;
  }
  return nullptr;
}

}  // namespace paddock
