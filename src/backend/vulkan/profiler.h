// PADDOCK_VULKAN_PROFILE=1: GPU time per kernel variant from timestamps around every
// dispatch, and the host's time per pass beside it, printed to stderr when the backend goes
// away. For finding where a pass's time goes on a real GPU; off by default (no queries then).
#pragma once

#include <vulkan/vulkan.h>

#include <chrono>
#include <cstddef>
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
  using Clock = std::chrono::steady_clock;
  // After the submission finished: dispatch i ran kernel names[i]; the pass began at `start`,
  // submitted its first part at `prepared` (the device idle until then) and finished
  // recording at `recorded`; unprofiled, it would have had `barriers` barriers (profiled, one
  // follows every dispatch).
  void collect(std::span<const std::string> names, Clock::time_point start, Clock::time_point prepared,
               Clock::time_point recorded, size_t barriers);

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
  double prepare_ms_ = 0;
  double record_ms_ = 0;
  // Between one pass's end and the next one's start (the caller's graph building, sampling,
  // reading results): gaps under a second, so idle time does not count.
  double between_ms_ = 0;
  Clock::time_point last_end_{};
  uint64_t passes_ = 0;
  uint64_t dispatches_ = 0;
  uint64_t barriers_ = 0;
};

}  // namespace paddock
