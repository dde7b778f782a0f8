// Which adjacent graph nodes the Vulkan backend runs as one dispatch. Each fusion saves a
// dispatch, the barrier before the next one and a round trip of an intermediate through
// memory; it applies only where nothing else reads that intermediate, and rounds as the
// separate kernels do, so results do not change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "backend/backend.h"
#include "backend/graph.h"
#include "backend/vulkan/kernels.h"

namespace paddock {

// A view's host address: its own, or its buffer's; null for device memory.
const uint8_t* host_address(const TensorView& v);
// Whether two views share bytes: views of one buffer's storage, or host memory, whose byte
// ranges meet.
bool overlaps(const TensorView& a, const TensorView& b);

// How many nodes from nodes[i] run as one dispatch (1: no fusion), and in `out` the node that
// dispatch runs where it is more than one:
// - a norm and the multiply of its output by a weight row: the norm with the row as src[1]
//   (rms_norm.comp's MUL);
// - a decode product (mul_mat_vec.comp) and the add of its output to a tensor of its shape:
//   the product with that tensor as src[2] (ADD), writing the add's output;
// - the gate and up decode products of one input and their swiglu or geglu: the GLU node
//   with src = {gate weights, input, up weights} (GLU);
// - a rope and the copy of its output into F32 or F16 rows of its shape (K cache cells): the
//   rope writing the copy's destination (rope.comp's DST_F16).
// `results`: what the pass's caller reads afterwards (kept as written).
size_t fused_nodes(std::span<const Node> nodes, size_t i, std::span<const TensorView> results,
                   const DeviceTraits& traits, Node& out);

// The integer-dot product (int_dot_product) among the few nodes after nodes[i] that reads
// `out`, nodes[i]'s output, as its activations before anything writes over it, or null: the
// norm that writes `out` then quantizes it for that product in the same dispatch.
const Node* int_dot_reader(std::span<const Node> nodes, size_t i, const TensorView& out,
                           const DeviceTraits& traits);

}  // namespace paddock
