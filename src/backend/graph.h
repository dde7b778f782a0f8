// A recorded forward pass: named nodes in execution order, and the plan of the pass's
// compute buffer. Builders record a node and return its output, a new tensor placed in the
// compute buffer; allocate() then gives that buffer memory on the backend's device, and
// Backend::compute runs the nodes in order. Node names are llama.cpp's (`Qcur-3`,
// `ffn_out-3`, `result_output`) so `paddock eval --dump-tensors` lines up with its dumps.
// Invariants: nodes run in recording order, so memory released after a node was recorded
// (release_since) may be reused by later nodes; a view of a planned tensor is valid for the
// graph's lifetime, its bytes only until allocate()'s buffer is reused by a later release.
//   Graph g;
//   TensorView y = g.mul_mat(w, x, "Qcur-0");   // [M, N]
//   PADDOCK_TRY(g.allocate(be.device()));  PADDOCK_TRY(be.compute(g));
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/buffer.h"
#include "base/status.h"

namespace paddock {

struct Node {
  Op op = Op::kCount;
  std::string name;
  TensorView dst;
  std::array<TensorView, 4> src{};
  int n_src = 0;
  std::span<const int32_t> ids;  // get_rows: rows; rope, attention: one position per token
  float scalar = 0;              // rms_norm, norm: eps; scale: the factor; swiglu_oai: alpha
  float scalar2 = 0;             // swiglu_oai: the clamp limit
  AttnParams attn;               // attention
  MoeParams moe;                 // moe_gate; mul_mat_id: moe.k
  RopeParams rope;               // rope (src[1], when present, holds the frequency factors)
  int32_t layer = -1;            // Graph::set_layer when recorded: -1 input, n_layer output

  std::span<const TensorView> inputs() const { return {src.data(), static_cast<size_t>(n_src)}; }
};

// n's input types, in op order (what Backend::supports takes).
std::array<DType, 4> input_types(const Node& n);
// kUnsupported naming the first node `be` cannot run (op and types), else ok.
Status check_supported(const Backend& be, std::span<const Node> nodes);

// Views whose buffer is set get their host address from it (buffer->host() + offset): what
// host backends do to each input and output before running a node's kernel.
TensorView host_view(const TensorView& v);
// n with host addresses, written into `out` (reused across a pass's nodes). The name is not
// copied: kernels never read it, and copying it would allocate for names of 16+ characters.
void host_node(const Node& n, Node& out);

class Graph {
 public:
  Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  // A new tensor in the compute buffer (contents undefined until a node writes it).
  TensorView tensor(DType type, std::initializer_list<int64_t> ne);
  // Tensors planned since mark() are released by release_since, except the one `keep` lies
  // in: later nodes reuse their memory, so a pass holds one layer's intermediates at a time.
  size_t mark() const { return next_id_; }
  void release_since(size_t mark, const TensorView& keep);
  // Bytes the compute buffer needs so far.
  size_t planned_bytes() const { return high_water_; }

  // Nodes recorded from here on belong to `layer` (Node::layer; placement runs each layer on
  // its backend): -1, the default, is the input, n_layer the output.
  void set_layer(int64_t layer) { layer_ = static_cast<int32_t>(layer); }

  // Copies ids into the graph, which keeps them for its lifetime. A table equal to one of the
  // last few kept is not copied again: every layer's rope and attention nodes then share one
  // table of positions (and the windowed layers one of ring cells), which device backends
  // upload once per pass, keyed by its address.
  std::span<const int32_t> keep(std::span<const int32_t> ids);

  // Builders (contracts at Op in backend.h); each returns its new output tensor.
  TensorView get_rows(const TensorView& table, std::span<const int32_t> ids, std::string name);
  TensorView mul_mat(const TensorView& w, const TensorView& x, std::string name);
  TensorView rms_norm(const TensorView& x, float eps, std::string name);
  TensorView mul(const TensorView& a, const TensorView& b, std::string name);
  TensorView add(const TensorView& a, const TensorView& b, std::string name);
  TensorView rope(const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
                  const std::optional<TensorView>& factors, std::string name);
  TensorView swiglu(const TensorView& gate, const TensorView& up, std::string name);
  TensorView geglu(const TensorView& gate, const TensorView& up, std::string name);
  TensorView scale(const TensorView& x, float s, std::string name);
  TensorView norm(const TensorView& x, float eps, std::string name);
  TensorView gelu(const TensorView& x, std::string name);
  TensorView tanh(const TensorView& x, std::string name);
  // Mixture of experts: router logits [n_expert, N] -> gate [n_expert, N]; the chosen
  // experts' products [M, k, N] for x [K, 1 or k, N]; their gate-weighted sum [M, N].
  TensorView moe_gate(const TensorView& logits, const MoeParams& p, std::string name);
  TensorView mul_mat_id(const TensorView& experts, const TensorView& x, const TensorView& gate, int32_t k,
                        std::string name);
  TensorView moe_sum(const TensorView& experts_out, const TensorView& gate, std::string name);
  // The chosen experts' biases [M, n_expert] added to their slots of x [M, k, N].
  TensorView add_id(const TensorView& x, const TensorView& bias, const TensorView& gate, std::string name);
  TensorView swiglu_oai(const TensorView& gate, const TensorView& up, float alpha, float limit,
                        std::string name);
  // These two write into dst (rows of a planned tensor, a KV cache's cells).
  void attention(const TensorView& q, const TensorView& k, const TensorView& v, std::span<const int32_t> pos,
                 const AttnParams& p, const std::optional<TensorView>& sinks, const TensorView& dst,
                 std::string name);
  void copy(const TensorView& src, const TensorView& dst, std::string name);
  // Any node, its dst given (eager one-op graphs: tests and kernel benches).
  void add_node(Node n);

  // Gives the compute buffer planned_bytes() of memory on `device`.
  Status allocate(Device& device);
  std::span<const Node> nodes() const { return nodes_; }

 private:
  struct Block {
    size_t offset;
    size_t size;
    size_t id;
  };
  TensorView record(Op op, std::string name, std::initializer_list<TensorView> src, TensorView dst);

  class ComputeBuffer;
  std::unique_ptr<ComputeBuffer> compute_;
  std::vector<Node> nodes_;
  std::deque<std::vector<int32_t>> ids_;
  std::deque<std::vector<AttnSeq>> seqs_;  // attention nodes' sequences
  std::vector<Block> live_;  // sorted by offset
  size_t next_id_ = 0;
  size_t high_water_ = 0;
  int32_t layer_ = -1;
};

}  // namespace paddock
