// What the host backends (ref, cpu) share to run a graph: a kernel table indexed by op, one
// row per op, and the loop that checks each node's types, gives its views host addresses and
// calls the row's kernel. A backend = its context type + one kKernels table.
//   constexpr HostKernelTable<Ctx> kKernels = {{ {supports_x, run_x}, ... }};
//   return run_host_nodes(*this, ctx, kKernels, nodes, after);
#pragma once

#include <array>
#include <functional>
#include <span>
#include <string>

#include "backend/backend.h"
#include "backend/graph.h"

namespace paddock {

template <class Ctx>
struct HostKernel {
  bool (*supports)(std::span<const DType> types);
  void (*run)(Ctx& ctx, const Node& node);  // the node's views have host addresses
};
template <class Ctx>
using HostKernelTable = std::array<HostKernel<Ctx>, kOpCount>;

// Type checks the host backends' tables share.
bool all_f32(std::span<const DType> types);
// q F32; k and v of one KV cache type.
bool attention_types(std::span<const DType> types);  // q F32, k and v one KV type, sinks F32
// An attention node's sinks (its fourth input, host addressed), or nullptr.
inline const float* attention_sinks(const Node& n) {
  return n.n_src == 4 ? static_cast<const float*>(n.src[3].data) : nullptr;
}
// copy from a float or KV block type.
bool supports_copy(std::span<const DType> types);
// Copies src to dst through F32 rows, quantizing with from_float as llama.cpp's CPU backend
// quantizes its cache: for copies where either side is a block type (KV cache rows). Rows
// must be dense (nb[0] = the type's block bytes).
void copy_through_f32(const TensorView& src, const TensorView& dst);

// Every row filled: a table shorter than the op list would leave null kernels.
template <class Ctx>
constexpr bool complete(const HostKernelTable<Ctx>& table) {
  for (const HostKernel<Ctx>& k : table) {
    if (k.supports == nullptr || k.run == nullptr) return false;
  }
  return true;
}

template <class Ctx>
bool table_supports(const HostKernelTable<Ctx>& table, Op op, std::span<const DType> types) {
  return op < Op::kCount && table[static_cast<size_t>(op)].supports(types);
}

template <class Ctx>
Status run_host_nodes(const Backend& be, Ctx& ctx, const HostKernelTable<Ctx>& table, std::span<const Node> nodes,
                      const std::function<void(const Node&)>& after) {
  PADDOCK_TRY(check_supported(be, nodes));
  Node h;
  for (const Node& n : nodes) {
    host_node(n, h);
    if (h.op == Op::kRope && h.n_src == 2) {
      h.rope.freq_factors = {static_cast<const float*>(h.src[1].data), static_cast<size_t>(h.src[1].ne[0])};
    }
    table[static_cast<size_t>(n.op)].run(ctx, h);
    if (after) after(n);
  }
  return Status::ok();
}

}  // namespace paddock
