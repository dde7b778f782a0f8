// A Vulkan device: the instance, one physical device chosen by PADDOCK_VULKAN_DEVICE or by
// kind (a real GPU, never a CPU implementation such as lavapipe unless named), its compute
// queue, and device-local Buffers that move bytes through a host-visible staging buffer.
// Invariants: every buffer keeps the context it came from alive; transfers wait for the
// queue (one submission at a time, under the context's lock), so a Buffer's set/get return
// with the bytes moved.
//   PADDOCK_ASSIGN(std::shared_ptr<VulkanContext> ctx, open_vulkan(env_get_or("VULKAN_DEVICE", "")));
//   PADDOCK_ASSIGN(auto buf, ctx->device().alloc(1 << 20));
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/buffer.h"
#include "base/status.h"

namespace paddock {

struct VulkanDeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
  bool is_cpu = false;
  uint64_t local_bytes = 0;  // the largest device-local heap
  uint64_t free_bytes = 0;   // of it, free for this process now (VK_EXT_memory_budget), else all
  // Integer dot products of four packed bytes (VK_KHR_shader_integer_dot_product), enabled
  // on the device; `accelerated`: the driver says they run faster than the same arithmetic
  // spelled out (a GPU's dp4a, not lavapipe's emulation).
  bool int_dot = false;
  bool int_dot_accelerated = false;
};

// Every Vulkan device the loader finds (an empty list when there is no loader or driver).
std::vector<VulkanDeviceInfo> list_vulkan_devices();

// The device open_vulkan("") takes from `devices`: the first discrete GPU, else integrated,
// virtual or other. With `visible` (GGML_VK_VISIBLE_DEVICES, which Ollama passes to ggml: a
// comma-separated list of indices) only the devices listed, in its order within each type,
// and a CPU device too (last). Null where there is none (-1, or indices of no device, hide
// every device: the CPU alone computes).
const VulkanDeviceInfo* automatic_device(const std::vector<VulkanDeviceInfo>& devices,
                                         const std::optional<std::string>& visible);
// The device a selector (PADDOCK_VULKAN_DEVICE) names: its index, or the first whose name
// contains it (any case). Null where none does.
const VulkanDeviceInfo* named_device(const std::vector<VulkanDeviceInfo>& devices,
                                     const std::string& selector);
// The device open_vulkan(selector) opens: named_device where `selector` is set, else
// automatic_device with GGML_VK_VISIBLE_DEVICES from the environment.
const VulkanDeviceInfo* selected_device(const std::vector<VulkanDeviceInfo>& devices,
                                        const std::string& selector);

class VulkanContext;

// A device-local buffer (storage, transfer source and destination).
class VulkanBuffer final : public Buffer {
 public:
  VulkanBuffer(std::shared_ptr<VulkanContext> ctx, VkBuffer buffer, VkDeviceMemory memory, size_t size);
  ~VulkanBuffer() override;
  Device& device() const override;
  size_t size() const override { return size_; }
  uint8_t* host() const override { return nullptr; }
  void set(size_t offset, std::span<const uint8_t> bytes) override;
  void get(size_t offset, std::span<uint8_t> bytes) const override;
  void copy_from(const Buffer& src, size_t src_offset, size_t offset, size_t n) override;
  void clear() override;
  VkBuffer handle() const { return buffer_; }
  const VulkanContext& context() const { return *ctx_; }

 private:
  std::shared_ptr<VulkanContext> ctx_;
  VkBuffer buffer_;
  VkDeviceMemory memory_;
  size_t size_;
};

// Host-visible, coherent memory the host writes and reads through a persistent mapping
// (a pass's parameters, staging).
struct MappedBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  size_t size = 0;
  uint8_t* data = nullptr;
};

class VulkanContext : public std::enable_shared_from_this<VulkanContext>, public Device {
 public:
  ~VulkanContext() override;
  std::string_view name() const override { return name_; }
  DeviceKind kind() const override { return DeviceKind::kAccelerator; }
  // Free memory from VK_EXT_memory_budget where the driver has it, else the heap size.
  DeviceMemory memory() const override;
  Result<std::unique_ptr<Buffer>> alloc(size_t bytes) override;

  VkDevice device_handle() const { return device_; }
  const VkPhysicalDeviceLimits& limits() const { return limits_; }
  const VulkanDeviceInfo& info() const { return info_; }

  // Host-visible memory of at least `bytes` (freed with release()). host_reads: cached where
  // the device has such memory (for what the host reads back: reads of uncached memory, which
  // a discrete GPU's host-visible memory is otherwise, take microseconds per cache line).
  Result<MappedBuffer> alloc_mapped(size_t bytes, bool host_reads = false);
  void release(MappedBuffer& b);
  // Records commands with `record`, submits them and waits. Serialised across threads.
  Status submit(const std::function<void(VkCommandBuffer)>& record) const;
  // Records `parts` command buffers with record(cmd, part), submitting each as soon as it is
  // recorded (the device runs one while the host records the next), then waits for all.
  Status submit_parts(size_t parts, const std::function<void(VkCommandBuffer, size_t)>& record) const;
  // Bytes between a device buffer and host memory through the staging buffers.
  void upload(VkBuffer dst, size_t offset, std::span<const uint8_t> bytes) const;
  void download(VkBuffer src, size_t offset, std::span<uint8_t> bytes) const;
  // How many buffers were destroyed so far: a descriptor kept across passes is valid only
  // while none was, since a new buffer may take a destroyed one's handle.
  uint64_t buffers_freed() const { return buffers_freed_.load(std::memory_order_relaxed); }
  void note_buffer_freed() { buffers_freed_.fetch_add(1, std::memory_order_relaxed); }

 private:
  friend Result<std::shared_ptr<VulkanContext>> open_vulkan(const std::string& selector);
  VulkanContext() = default;
  Status init(VkInstance instance, VkPhysicalDevice physical, VulkanDeviceInfo info);
  Status create_buffer(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags props,
                       VkMemoryPropertyFlags prefer, VkBuffer* buffer, VkDeviceMemory* memory);

  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  // Command buffer i and its fence record part i of a submission; grown on demand.
  mutable std::vector<VkCommandBuffer> cmds_;
  mutable std::vector<VkFence> fences_;
  VkPhysicalDeviceLimits limits_{};
  VulkanDeviceInfo info_;
  std::string name_;
  bool has_budget_ = false;
  uint32_t local_heap_ = 0;
  mutable std::recursive_mutex mu_;
  mutable MappedBuffer staging_;   // uploads: written by the host only
  mutable MappedBuffer readback_;  // downloads: host_reads memory
  std::atomic<uint64_t> buffers_freed_{0};
};

// The first of `bits`' memory types (a buffer's allowed ones) with every `want` flag and the
// `prefer` flags, else the first with the `want` flags alone; nothing when none has them.
std::optional<uint32_t> pick_memory_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t bits,
                                         VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer);

// Records the barrier after copies into host-visible memory that makes their bytes visible to
// the host once the submission's fence has signalled.
void record_copies_to_host(VkCommandBuffer cmd);

// Opens the device `selector` names (an index into list_vulkan_devices(), or a substring of
// its name, case-insensitive), or when empty the first GPU, discrete ones first. kNotFound
// when nothing matches (the message lists the devices), kUnsupported without a loader or a
// device with the storage features the kernels need.
Result<std::shared_ptr<VulkanContext>> open_vulkan(const std::string& selector);

}  // namespace paddock
