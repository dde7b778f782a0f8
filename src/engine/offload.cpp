#include "engine/offload.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/placement.h"
#include "backend/split_backend.h"
#include "base/env.h"
#include "base/log.h"
#include "engine/loaded_model.h"
#include "kv/kv_cache.h"
#include "model/weights.h"
#if PADDOCK_HAVE_VULKAN
#include "backend/vulkan/vulkan_backend.h"
#include "backend/vulkan/vulkan_device.h"
#endif

namespace paddock::engine {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// OLLAMA_GPU_OVERHEAD: bytes of VRAM to leave free.
uint64_t gpu_overhead() {
  const std::optional<std::string> v = env_get("GPU_OVERHEAD");
  uint64_t n = 0;
  if (v && !v->empty()) {
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size()) {
      log_warn("OLLAMA_GPU_OVERHEAD: expected a number of bytes, found \"" + *v + "\"; using 0");
      n = 0;
    }
  }
  return n;
}

// Why Ollama's settings keep the GPU out, or "": OLLAMA_VULKAN=0 (Vulkan discovery off) or
// OLLAMA_LLM_LIBRARY=cpu... (the CPU library forced). Another library (cuda_v12, rocm) is
// Ollama's name for a GPU, which paddock drives through Vulkan.
std::string gpu_switched_off() {
  const std::optional<std::string> vulkan = env_get("VULKAN");
  if (vulkan && !vulkan->empty() && !env_flag("VULKAN", true)) return "OLLAMA_VULKAN=" + *vulkan;
  const std::string library = env_get_or("LLM_LIBRARY", "");
  if (library.starts_with("cpu")) return "OLLAMA_LLM_LIBRARY=" + library;
  return "";
}

// A pass's activations on the device: a batch's rows through the widest layer, and the
// logits of one row per sequence.
uint64_t compute_reserve(const gguf::File& file, const HParams& hp, const EngineOptions& o) {
  const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
  const int64_t n_vocab = embd != nullptr && embd->ne.size() > 1 ? embd->ne[1] : 0;
  const auto batch = static_cast<uint64_t>(o.num_batch > 0 ? o.num_batch : kDefaultNumBatch);
  int64_t widest = hp.n_embd;
  for (const LayerParams& l : hp.layers) widest = std::max(widest, l.n_ff);
  return batch * static_cast<uint64_t>(4 * hp.n_embd + 3 * widest) * sizeof(float) +
         static_cast<uint64_t>(o.num_parallel) * static_cast<uint64_t>(n_vocab) * sizeof(float) + 64 * kMiB;
}

// What placing the whole model on a GPU with `free` bytes weighs at context n_ctx.
FitRequest fit_request(const gguf::File& file, const HParams& hp, int64_t n_ctx, const EngineOptions& options,
                       uint64_t free) {
  FitRequest fit = offload_weights(file, hp.n_layer);
  // Windowed layers count their rings (hp comes from arch_hparams).
  const uint64_t kv_all =
      kv_cache_bytes(kv_config(hp, n_ctx, options.kv_type, resolve_num_batch(options.num_batch, hp, n_ctx))) *
      static_cast<uint64_t>(options.num_parallel);
  fit.kv_per_layer = kv_all / static_cast<uint64_t>(std::max<int64_t>(hp.n_layer, 1));
  fit.compute = compute_reserve(file, hp, options);
  fit.free = free;
  return fit;
}

// The memory of the GPU placement would use: its largest device-local heap, and what is free
// of it now. None where it would use none (switched off, none found, a CPU device, whose
// memory is the host's).
struct PlacementGpu {
  uint64_t total = 0, free = 0;
  bool integrated = false;
};
std::optional<PlacementGpu> placement_gpu() {
  if (!gpu_switched_off().empty()) return std::nullopt;
#if PADDOCK_HAVE_VULKAN
  const std::vector<VulkanDeviceInfo> devices = list_vulkan_devices();
  const VulkanDeviceInfo* d = selected_device(devices, env_get_or("VULKAN_DEVICE", ""));
  if (d == nullptr || d->is_cpu) return std::nullopt;
  return PlacementGpu{.total = d->local_bytes, .free = d->free_bytes, .integrated = d->type == "integrated"};
#else
  return std::nullopt;
#endif
}

// placement_gpu_memory(), found.
uint64_t placement_gpu_bytes() {
  const std::optional<PlacementGpu> gpu = placement_gpu();
  const uint64_t overhead = gpu_overhead();
  return gpu && gpu->total > overhead ? gpu->total - overhead : 0;
}

std::string human(uint64_t bytes) {
  if (bytes < (uint64_t{1} << 30)) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes >> 30) + "." + std::to_string((bytes & ((uint64_t{1} << 30) - 1)) * 10 >> 30) +
         " GiB";
}

}  // namespace

int64_t num_ctx_tier(uint64_t gpu_bytes) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  if (gpu_bytes >= 47 * kGiB) return 262144;
  if (gpu_bytes >= 23 * kGiB) return 32768;
  return kDefaultNumCtx;
}

int64_t lower_num_ctx_tier(int64_t n_ctx) {
  if (n_ctx > 32768) return 32768;
  return n_ctx > kDefaultNumCtx ? kDefaultNumCtx : 0;
}

int64_t fitting_num_ctx(uint64_t gpu_bytes, const std::function<FitRequest(int64_t n_ctx)>& at) {
  int64_t n = num_ctx_tier(gpu_bytes);
  for (; n > kDefaultNumCtx; n = lower_num_ctx_tier(n)) {
    FitRequest whole = at(n);
    whole.free = gpu_bytes;
    if (fit_offload(whole) > static_cast<int64_t>(whole.layer_weights.size())) break;
  }
  return n;
}

uint64_t placement_gpu_memory() {
  static const uint64_t bytes = placement_gpu_bytes();  // Ollama reads it once, at start
  return bytes;
}

std::optional<uint64_t> placement_gpu_free_memory() {
  const std::optional<PlacementGpu> gpu = placement_gpu();
  if (!gpu || gpu->integrated) return std::nullopt;
  return gpu->free;
}

int64_t automatic_num_ctx(const gguf::File& file, const HParams& hp, const EngineOptions& options) {
  const uint64_t gpu_bytes = placement_gpu_memory();
  return fitting_num_ctx(gpu_bytes, [&](int64_t n_ctx) {
    return fit_request(file, hp, hp.n_ctx_train > 0 ? std::min(n_ctx, hp.n_ctx_train) : n_ctx, options,
                       gpu_bytes);
  });
}

Result<Offload> make_offload_backend(const gguf::File& file, const HParams& hp, int64_t n_ctx,
                                     const EngineOptions& options) {
  Offload out;
  PADDOCK_ASSIGN(std::unique_ptr<Backend> cpu, make_cpu_backend(options.num_thread));
  const std::string switched_off = gpu_switched_off();
  const bool want_gpu = (!options.num_gpu || *options.num_gpu != 0) && switched_off.empty();
  if (!switched_off.empty()) out.summary = switched_off + ": running on the CPU";
#if PADDOCK_HAVE_VULKAN
  if (want_gpu) {
    const std::optional<std::string> named = env_get("VULKAN_DEVICE");
    Result<std::unique_ptr<Backend>> gpu = make_vulkan_backend(named.value_or(""));
    // The user asked for that device, or for what it lacks.
    if (!gpu.ok() && ((named && !named->empty()) || gpu.status().code() == Code::kInvalidArgument)) {
      return gpu.status();
    }
    out.gpu_found = gpu.ok();
    std::string blocker;
    const int64_t can_offload = gpu.ok() ? offloadable_layers(file, hp.n_layer, **gpu, &blocker) : 0;
    if (gpu.ok() && can_offload == 0) {
      out.summary = "the " + std::string((*gpu)->device().name()) + " backend has no kernel for " + blocker +
                    " in the last layer: running on the CPU";
    } else if (gpu.ok()) {
      std::unique_ptr<Backend> vk = std::move(gpu).value();
      const DeviceMemory mem = vk->device().memory();
      const uint64_t overhead = gpu_overhead();
      const FitRequest fit =
          fit_request(file, hp, n_ctx, options, mem.free > overhead ? mem.free - overhead : 0);
      const bool automatic = !options.num_gpu || *options.num_gpu < 0;
      out.gpu_layers = std::clamp<int64_t>(automatic ? fit_offload(fit) : *options.num_gpu, 0, can_offload);
      for (int64_t il = std::max<int64_t>(hp.n_layer - out.gpu_layers, 0); il < hp.n_layer; ++il) {
        out.device_bytes += fit.layer_weights[static_cast<size_t>(il)] + fit.kv_per_layer;
      }
      if (out.gpu_layers > hp.n_layer) out.device_bytes += fit.output_weights;
      out.summary = "offloading " + std::to_string(std::min(out.gpu_layers, hp.n_layer)) + "/" +
                    std::to_string(hp.n_layer) + " layers" +
                    (out.gpu_layers > hp.n_layer ? " and the output" : "") + " to " +
                    std::string(vk->device().name()) + " (" + human(mem.free) + " free of " +
                    human(mem.total) + ", " + human(out.device_bytes) + " of weights and KV cache there)" +
                    (can_offload <= hp.n_layer ? "; at most " + std::to_string(can_offload) + ": it has no kernel for " +
                                                     blocker
                                               : "");
      if (out.gpu_layers > 0) {
        std::vector<std::unique_ptr<Backend>> bs;
        bs.push_back(std::move(cpu));
        bs.push_back(std::move(vk));
        PADDOCK_ASSIGN(out.backend, make_split_backend(std::move(bs),
                                                       Placement::offload(hp.n_layer, out.gpu_layers, 0, 1)));
        return out;
      }
    } else {
      log_debug("no GPU: " + gpu.status().message());
    }
  }
#endif
  out.backend = std::move(cpu);
  out.gpu_layers = 0;
  out.device_bytes = 0;
  if (out.summary.empty())
    out.summary = want_gpu ? "no GPU found; running on the CPU" : "num_gpu 0: running on the CPU";
  return out;
}

}  // namespace paddock::engine
