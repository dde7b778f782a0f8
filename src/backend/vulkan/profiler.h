// PADDOCK_VULKAN_PROFILE=1: GPU time per kernel variant from timestamps around every
// dispatch, and the host's time per pass beside it, printed to stderr when the backend goes
// away. For finding where a pass's time goes on a real GPU; off by default (no queries then).
#pragma once

#include <vulkan/vulkan.h>

#include <map>
#include <span>
#include <string>

#include "backend/vulkan/vulkan_device.h"

namespace paddock {

class KernelProfiler {
 public:
  explicit KernelProfiler(VulkanContext& ctx);
  KernelProfiler(const KernelProfiler&) = delete;
  KernelProfiler& operator=(const KernelProfiler&) = delete;
  ~KernelProfiler();

  bool enabled() const { return enabled_; }
  // Before recording n dispatches: room for n + 1 stamps, reset in the command buffer.
  void begin(VkCommandBuffer cmd, uint32_t n);
  // Stamp i: before dispatch i (i = n: after the last).
  void stamp(VkCommandBuffer cmd, uint32_t i);
  // After the submission finished: dispatch i ran kernel names[i]; the pass took
  // host_seconds, of which record_seconds went to preparing and recording it.
  void collect(std::span<const std::string> names, double host_seconds, double record_seconds);

 private:
  VulkanContext& ctx_;
  bool enabled_ = false;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t capacity_ = 0;
  struct Total {
    double ms = 0;
    uint64_t calls = 0;
  };
  std::map<std::string, Total> totals_;
  double host_ms_ = 0;
  double record_ms_ = 0;
  uint64_t passes_ = 0;
};

}  // namespace paddock
