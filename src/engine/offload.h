// Where a model's layers run: Ollama's num_gpu over the Vulkan backend. With a GPU (vulkan
// backend, PADDOCK_VULKAN_DEVICE or the first one found) the last num_gpu repeating layers,
// and the output once num_gpu exceeds them, go to it; by default as many as fit in its free
// memory minus OLLAMA_GPU_OVERHEAD, with their KV caches and a compute reserve counted. The
// rest, and the token embeddings, run on the CPU backend.
//   PADDOCK_ASSIGN(Offload o, make_offload_backend(file, hp, options));  // o.backend, o.gpu_layers
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf.h"
#include "model/hparams.h"

namespace paddock::engine {

struct EngineOptions;

struct Offload {
  std::unique_ptr<Backend> backend;
  int64_t gpu_layers = 0;     // as num_gpu counts them: repeating layers, then the output
  uint64_t device_bytes = 0;  // weights and KV cells on the GPU (Ollama's size_vram)
  std::string summary;        // for the server log: the device and the split
  bool gpu_found = false;     // a GPU was there, used or not
};

// n_ctx: the context each of options.num_parallel KV caches holds. Without a GPU (none found,
// Vulkan not built, num_gpu 0) the CPU backend alone. kNotFound when PADDOCK_VULKAN_DEVICE
// names no device.
Result<Offload> make_offload_backend(const gguf::File& file, const HParams& hp, int64_t n_ctx,
                                     const EngineOptions& options);

}  // namespace paddock::engine
