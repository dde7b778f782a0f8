// A backend that runs each part of a pass on the backend its Placement names: a graph's
// nodes carry their layer (Graph::set_layer), and each run of consecutive nodes of one
// backend goes to that backend. for_layer() tells loaders which backend holds a layer's
// weights and KV cells. Nothing runs unless every node's backend supports it.
// Invariant: the pass has one compute buffer, in host memory (the input's backend is a host
// backend), that all of them read and write; an accelerator backend copies the part of it
// its nodes touch to its device and back (vulkan_backend.h), while its layers' weights and KV
// cells stay on the device.
//   std::vector<std::unique_ptr<Backend>> bs;  bs.push_back(make_cpu_backend(2));  bs.push_back(make_ref_backend());
//   PADDOCK_ASSIGN(auto be, make_split_backend(std::move(bs), Placement::offload(n_layer, 3, 0, 1)));
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/placement.h"
#include "base/status.h"

namespace paddock {

// kInvalidArgument for an empty list or a placement naming a backend not in it;
// kUnsupported when the input's backend is not a host backend.
Result<std::unique_ptr<Backend>> make_split_backend(std::vector<std::unique_ptr<Backend>> backends,
                                                    Placement placement);

}  // namespace paddock
