// Where a model's layers run: Ollama's num_gpu over the Vulkan backend. With a GPU (vulkan
// backend, PADDOCK_VULKAN_DEVICE or the first one found) the last num_gpu repeating layers,
// and the output once num_gpu exceeds them, go to it; by default as many as fit in its free
// memory minus OLLAMA_GPU_OVERHEAD, with their KV caches and a compute reserve counted. The
// rest, and the token embeddings, run on the CPU backend.
//   PADDOCK_ASSIGN(Offload o, make_offload_backend(file, hp, options));  // o.backend, o.gpu_layers
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "backend/placement.h"
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

// Ollama's automatic context by a GPU's memory: 262144 from 47 GiB, 32768 from 23 GiB, else
// 4096 (every machine without a GPU).
int64_t num_ctx_tier(uint64_t gpu_bytes);
// The tier below a context: 32768 above it, else 4096 above that; 0 at 4096 and below.
int64_t lower_num_ctx_tier(int64_t n_ctx);
// The largest tier for gpu_bytes at which the model fits that memory whole (`at(n_ctx)`: its
// layers, output, KV caches and a pass's activations at that context), else 4096: Ollama
// retries a tier lower when a load at its tier runs out of memory.
int64_t fitting_num_ctx(uint64_t gpu_bytes, const std::function<FitRequest(int64_t n_ctx)>& at);
// The memory of the GPU the placement would use (its total, less OLLAMA_GPU_OVERHEAD; read
// once per process); 0 without one (none found, Vulkan off, a CPU device such as lavapipe).
uint64_t placement_gpu_memory();
// What is free now of that GPU's memory, for waiting on an unloaded model's memory to come
// back (Ollama's waitForVRAMRecovery). None without one, and for an integrated GPU, whose
// memory is the host's.
std::optional<uint64_t> placement_gpu_free_memory();
// The context a model gets where neither the request, the Modelfile nor
// OLLAMA_CONTEXT_LENGTH sets one: fitting_num_ctx over placement_gpu_memory(), with
// `options`' KV caches.
int64_t automatic_num_ctx(const gguf::File& file, const HParams& hp, const EngineOptions& options);

// n_ctx: the context each of options.num_parallel KV caches holds. Without a GPU (none found,
// Vulkan not built, num_gpu 0) the CPU backend alone. kNotFound when PADDOCK_VULKAN_DEVICE
// names no device.
Result<Offload> make_offload_backend(const gguf::File& file, const HParams& hp, int64_t n_ctx,
                                     const EngineOptions& options);

}  // namespace paddock::engine
