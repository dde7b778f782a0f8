// The Vulkan backend: every op of backend.h as a compute shader of our own (shaders/), run
// on any Vulkan 1.2 device with 8- and 16-bit storage access, lavapipe included. A pass is
// one command buffer: each node a dispatch, a barrier between them, one submission and one
// wait. Weights are copied to device memory once (at load through prepare_weight, else at
// their first pass); activations and KV cells live in the device's buffers. Tensors of a
// host buffer (the compute buffer of a pass split with the cpu backend) are mirrored: copied
// in before the pass's nodes run here and their outputs copied back after.
// Invariants: results match ref within each op-test case's tolerance (NMSE; mul_mat a
// fraction of sum |w x|); a node this backend cannot run is refused before anything runs.
//   PADDOCK_ASSIGN(std::unique_ptr<Backend> be, make_vulkan_backend(""));
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "base/status.h"

namespace paddock {

// The device `selector` names (vulkan_device.h open_vulkan: an index or part of a name;
// empty: PADDOCK_VULKAN_DEVICE, else the first GPU). kNotFound / kUnsupported say why none;
// kInvalidArgument: a setting asks for what the device lacks.
// How kernels are chosen, beyond what the device says of itself.
struct VulkanTuning {
  // Shape work as for a GPU even on a CPU device (or PADDOCK_VULKAN_TUNING=gpu; tests run
  // both tunings on lavapipe).
  bool gpu = false;
  // Decode's products with integer dot products: by default where the driver accelerates
  // them; set, wherever the device has them at all (or PADDOCK_VULKAN_INT_DOT=1 / 0).
  std::optional<bool> int_dot;
};
Result<std::unique_ptr<Backend>> make_vulkan_backend(const std::string& selector, VulkanTuning tuning = {});

}  // namespace paddock
