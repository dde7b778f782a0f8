#include "backend/graph.h"

#include <algorithm>

#include "base/check.h"

namespace paddock {

namespace {
constexpr size_t kAlign = 64;  // a cache line: kernels' vector loads never split one
}  // namespace

// The pass's compute buffer: planned while nodes are recorded, memory given by allocate().
class Graph::ComputeBuffer final : public Buffer {
 public:
  Device& device() const override { return mem().device(); }
  size_t size() const override { return mem().size(); }
  uint8_t* host() const override { return mem().host(); }
  void set(size_t offset, std::span<const uint8_t> bytes) override { mem().set(offset, bytes); }
  void get(size_t offset, std::span<uint8_t> bytes) const override { mem().get(offset, bytes); }
  void copy_from(const Buffer& src, size_t src_offset, size_t offset, size_t n) override {
    mem().copy_from(src, src_offset, offset, n);
  }
  void clear() override { mem().clear(); }
  const Buffer& storage() const override { return mem().storage(); }

  std::unique_ptr<Buffer> mem_;

 private:
  Buffer& mem() const {
    PADDOCK_CHECK_MSG(mem_ != nullptr, "graph tensors have no memory before Graph::allocate");
    return *mem_;
  }
};

TensorView host_view(const TensorView& v) {
  if (v.buffer == nullptr) return v;
  TensorView h = v;
  uint8_t* base = v.buffer->host();
  PADDOCK_CHECK_MSG(base != nullptr, "a host kernel was given device memory");
  h.data = base + v.offset;
  return h;
}

void host_node(const Node& n, Node& out) {
  out.op = n.op;
  out.dst = host_view(n.dst);
  out.n_src = n.n_src;
  for (int i = 0; i < n.n_src; ++i) out.src[i] = host_view(n.src[i]);
  out.ids = n.ids;
  out.scalar = n.scalar;
  out.scalar2 = n.scalar2;
  out.attn = n.attn;
  out.rope = n.rope;
  out.moe = n.moe;
}

Graph::Graph() : compute_(std::make_unique<ComputeBuffer>()) {}
Graph::~Graph() = default;

TensorView Graph::tensor(DType type, std::initializer_list<int64_t> ne) {
  TensorView v = TensorView::contiguous(nullptr, type, ne);
  const size_t size = (v.n_bytes() + kAlign - 1) / kAlign * kAlign;
  // First fit among the gaps between live blocks, else after the last one.
  size_t offset = 0;
  auto it = live_.begin();
  for (; it != live_.end(); ++it) {
    if (it->offset - offset >= size) break;
    offset = it->offset + it->size;
  }
  live_.insert(it, Block{offset, size, next_id_++});
  high_water_ = std::max(high_water_, offset + size);
  v.buffer = compute_.get();
  v.offset = offset;
  return v;
}

void Graph::release_since(size_t mark, const TensorView& keep) {
  std::erase_if(live_, [&](const Block& b) {
    const bool holds_keep =
        keep.buffer == compute_.get() && keep.offset >= b.offset && keep.offset < b.offset + b.size;
    return b.id >= mark && !holds_keep;
  });
}

std::span<const int32_t> Graph::keep(std::span<const int32_t> ids) {
  if (ids.empty()) return {};
  constexpr size_t kRecent = 4;  // a layer keeps positions and ring cells in turn
  for (size_t i = 0; i < std::min(kRecent, ids_.size()); ++i) {
    const std::vector<int32_t>& kept = ids_[ids_.size() - 1 - i];
    if (std::equal(kept.begin(), kept.end(), ids.begin(), ids.end())) return kept;
  }
  return ids_.emplace_back(ids.begin(), ids.end());
}

TensorView Graph::record(Op op, std::string name, std::initializer_list<TensorView> src, TensorView dst) {
  Node n;
  n.op = op;
  n.name = std::move(name);
  n.dst = dst;
  for (const TensorView& s : src) n.src[n.n_src++] = s;
  n.layer = layer_;
  nodes_.push_back(std::move(n));
  return dst;
}

TensorView Graph::get_rows(const TensorView& table, std::span<const int32_t> ids, std::string name) {
  TensorView out = tensor(DType::kF32, {table.ne[0], static_cast<int64_t>(ids.size())});  // [n, n_ids]
  record(Op::kGetRows, std::move(name), {table}, out);
  nodes_.back().ids = keep(ids);
  return out;
}

TensorView Graph::mul_mat(const TensorView& w, const TensorView& x, std::string name) {
  PADDOCK_CHECK(w.ne[0] == x.ne[0] && x.type == DType::kF32);
  TensorView out = tensor(DType::kF32, {w.ne[1], x.ne[1], x.ne[2]});  // [M, N, B]
  return record(Op::kMulMat, std::move(name), {w, x}, out);
}

TensorView Graph::rms_norm(const TensorView& x, float eps, std::string name) {
  TensorView out = tensor(DType::kF32, {x.ne[0], x.ne[1], x.ne[2], x.ne[3]});
  record(Op::kRmsNorm, std::move(name), {x}, out);
  nodes_.back().scalar = eps;
  return out;
}

TensorView Graph::mul(const TensorView& a, const TensorView& b, std::string name) {
  TensorView out = tensor(DType::kF32, {a.ne[0], a.ne[1], a.ne[2], a.ne[3]});
  return record(Op::kMul, std::move(name), {a, b}, out);
}

TensorView Graph::add(const TensorView& a, const TensorView& b, std::string name) {
  TensorView out = tensor(DType::kF32, {a.ne[0], a.ne[1], a.ne[2], a.ne[3]});
  return record(Op::kAdd, std::move(name), {a, b}, out);
}

TensorView Graph::rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
                       const std::optional<TensorView>& factors, std::string name) {
  PADDOCK_CHECK(static_cast<int64_t>(pos.size()) == x.ne[2] && p.freq_factors.empty());
  TensorView out = tensor(DType::kF32, {x.ne[0], x.ne[1], x.ne[2]});  // [head_dim, n_head, n_tokens]
  if (factors) {
    record(Op::kRope, std::move(name), {x, *factors}, out);
  } else {
    record(Op::kRope, std::move(name), {x}, out);
  }
  nodes_.back().ids = keep(pos);
  nodes_.back().rope = p;
  return out;
}

TensorView Graph::swiglu(const TensorView& gate, const TensorView& up, std::string name) {
  PADDOCK_CHECK(gate.same_shape(up));
  TensorView out = tensor(DType::kF32, {gate.ne[0], gate.ne[1], gate.ne[2], gate.ne[3]});
  return record(Op::kSwiglu, std::move(name), {gate, up}, out);
}

TensorView Graph::geglu(const TensorView& gate, const TensorView& up, std::string name) {
  PADDOCK_CHECK(gate.same_shape(up));
  TensorView out = tensor(DType::kF32, {gate.ne[0], gate.ne[1], gate.ne[2], gate.ne[3]});
  return record(Op::kGeglu, std::move(name), {gate, up}, out);
}

TensorView Graph::scale(const TensorView& x, float s, std::string name) {
  TensorView out = tensor(DType::kF32, {x.ne[0], x.ne[1], x.ne[2], x.ne[3]});
  record(Op::kScale, std::move(name), {x}, out);
  nodes_.back().scalar = s;
  return out;
}

TensorView Graph::norm(const TensorView& x, float eps, std::string name) {
  TensorView out = tensor(DType::kF32, {x.ne[0], x.ne[1], x.ne[2], x.ne[3]});
  record(Op::kNorm, std::move(name), {x}, out);
  nodes_.back().scalar = eps;
  return out;
}

TensorView Graph::gelu(const TensorView& x, std::string name) {
  TensorView out = tensor(DType::kF32, {x.ne[0], x.ne[1], x.ne[2], x.ne[3]});
  return record(Op::kGelu, std::move(name), {x}, out);
}

TensorView Graph::tanh(const TensorView& x, std::string name) {
  TensorView out = tensor(DType::kF32, {x.ne[0], x.ne[1], x.ne[2], x.ne[3]});
  return record(Op::kTanh, std::move(name), {x}, out);
}

TensorView Graph::moe_gate(const TensorView& logits, const MoeParams& p, std::string name) {
  PADDOCK_CHECK(logits.type == DType::kF32 && p.k > 0 && p.k <= logits.ne[0]);
  TensorView out = tensor(DType::kF32, {logits.ne[0], logits.ne[1]});
  record(Op::kMoeGate, std::move(name), {logits}, out);
  nodes_.back().moe = p;
  return out;
}

TensorView Graph::mul_mat_id(const TensorView& experts, const TensorView& x, const TensorView& gate,
                             int32_t k, std::string name) {
  PADDOCK_CHECK(experts.ne[0] == x.ne[0] && x.type == DType::kF32 && (x.ne[1] == 1 || x.ne[1] == k));
  PADDOCK_CHECK(gate.ne[0] == experts.ne[2] && gate.ne[1] == x.ne[2] && k > 0 && k <= experts.ne[2]);
  TensorView out = tensor(DType::kF32, {experts.ne[1], k, x.ne[2]});  // [M, k, N]
  record(Op::kMulMatId, std::move(name), {experts, x, gate}, out);
  nodes_.back().moe.k = k;
  return out;
}

TensorView Graph::moe_sum(const TensorView& experts_out, const TensorView& gate, std::string name) {
  PADDOCK_CHECK(gate.ne[1] == experts_out.ne[2] && experts_out.ne[1] <= gate.ne[0]);
  TensorView out = tensor(DType::kF32, {experts_out.ne[0], experts_out.ne[2]});  // [M, N]
  return record(Op::kMoeSum, std::move(name), {experts_out, gate}, out);
}

TensorView Graph::add_id(const TensorView& x, const TensorView& bias, const TensorView& gate,
                         std::string name) {
  PADDOCK_CHECK(bias.ne[0] == x.ne[0] && bias.ne[1] == gate.ne[0] && gate.ne[1] == x.ne[2] &&
                x.ne[1] <= gate.ne[0]);
  TensorView out = tensor(DType::kF32, {x.ne[0], x.ne[1], x.ne[2]});
  return record(Op::kAddId, std::move(name), {x, bias, gate}, out);
}

TensorView Graph::swiglu_oai(const TensorView& gate, const TensorView& up, float alpha, float limit,
                             std::string name) {
  PADDOCK_CHECK(gate.same_shape(up));
  TensorView out = tensor(DType::kF32, {gate.ne[0], gate.ne[1], gate.ne[2], gate.ne[3]});
  record(Op::kSwigluOai, std::move(name), {gate, up}, out);
  nodes_.back().scalar = alpha;
  nodes_.back().scalar2 = limit;
  return out;
}

void Graph::attention(const TensorView& q, const TensorView& k, const TensorView& v,
                      std::span<const int32_t> pos, const AttnParams& p,
                      const std::optional<TensorView>& sinks, const TensorView& dst, std::string name) {
  PADDOCK_CHECK(static_cast<int64_t>(pos.size()) == q.ne[2]);
  PADDOCK_CHECK(p.window >= 0 && (p.window == 0 || p.causal) && p.softcap >= 0);
  PADDOCK_CHECK(p.cells.empty() || static_cast<int64_t>(p.cells.size()) == k.ne[2]);
  PADDOCK_CHECK(attn_seqs_valid(p.seqs, q.ne[2], k.ne[2]));
  if (sinks) {
    PADDOCK_CHECK(sinks->type == DType::kF32 && sinks->ne[0] == q.ne[1]);
    record(Op::kAttention, std::move(name), {q, k, v, *sinks}, dst);
  } else {
    record(Op::kAttention, std::move(name), {q, k, v}, dst);
  }
  nodes_.back().ids = keep(pos);
  nodes_.back().attn = p;
  nodes_.back().attn.cells = keep(p.cells);
  if (p.seqs.empty()) return;
  // Every layer's node shares one copy (two: windowed and full layers differ), as in keep().
  for (size_t i = 0; i < std::min<size_t>(2, seqs_.size()); ++i) {
    const std::vector<AttnSeq>& kept = seqs_[seqs_.size() - 1 - i];
    if (std::ranges::equal(kept, p.seqs)) {
      nodes_.back().attn.seqs = kept;
      return;
    }
  }
  nodes_.back().attn.seqs = seqs_.emplace_back(p.seqs.begin(), p.seqs.end());
}

void Graph::copy(const TensorView& src, const TensorView& dst, std::string name) {
  PADDOCK_CHECK(src.same_shape(dst));
  record(Op::kCopy, std::move(name), {src}, dst);
}

void Graph::add_node(Node n) {
  n.layer = layer_;
  nodes_.push_back(std::move(n));
}

Status Graph::allocate(Device& device) {
  PADDOCK_ASSIGN(compute_->mem_, device.alloc(high_water_));
  return Status::ok();
}

std::array<DType, 4> input_types(const Node& n) {
  std::array<DType, 4> t{};
  for (int i = 0; i < n.n_src; ++i) t[i] = n.src[i].type;
  return t;
}

Status check_supported(const Backend& be, std::span<const Node> nodes) {
  for (const Node& n : nodes) {
    const std::array<DType, 4> types = input_types(n);
    if (!be.supports(n.op, std::span(types.data(), static_cast<size_t>(n.n_src)))) {
      return unsupported("backend " + std::string(be.name()) + " cannot run node " + n.name + " (" +
                         std::string(op_name(n.op)) + " of " + std::string(dtype_name(types[0])) + ")");
    }
  }
  return Status::ok();
}

Status Backend::compute(const Graph& g, const std::function<void(const Node&)>& after) {
  if (g.nodes().empty()) return Status::ok();
  const TensorView result = g.nodes().back().dst;  // what the caller reads
  return run_nodes(g.nodes(), after, std::span(&result, 1));
}

}  // namespace paddock
