#include "backend/vulkan/profiler.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "base/env.h"

namespace paddock {

KernelProfiler::KernelProfiler(VulkanContext& ctx) : ctx_(ctx), enabled_(env_flag("VULKAN_PROFILE")) {}

KernelProfiler::~KernelProfiler() {
  if (pool_ != VK_NULL_HANDLE) vkDestroyQueryPool(ctx_.device_handle(), pool_, nullptr);
  if (!enabled_ || passes_ == 0) return;
  std::vector<std::pair<std::string, Total>> rows(totals_.begin(), totals_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  double gpu = 0;
  for (const auto& r : rows) gpu += r.second.ms;
  std::fprintf(stderr,
               "vulkan profile: %llu passes, host %.1f ms in them (preparing %.1f ms before the first "
               "submission, recording done at %.1f ms) and %.1f ms between them, GPU kernels %.1f ms; "
               "%llu dispatches, %llu barriers unprofiled\n",
               static_cast<unsigned long long>(passes_), host_ms_, prepare_ms_, record_ms_, between_ms_, gpu,
               static_cast<unsigned long long>(dispatches_), static_cast<unsigned long long>(barriers_));
  for (const auto& [name, t] : rows) {
    std::fprintf(stderr, "  %-24s %10.2f ms %5.1f%% %8llu calls %9.1f us/call\n", name.c_str(), t.ms,
                 100 * t.ms / std::max(gpu, 1e-9), static_cast<unsigned long long>(t.calls),
                 1000 * t.ms / static_cast<double>(std::max<uint64_t>(t.calls, 1)));
  }
}

void KernelProfiler::begin(VkCommandBuffer cmd, uint32_t n) {
  if (!enabled_) return;
  if (n + 1 > capacity_) {
    if (pool_ != VK_NULL_HANDLE) vkDestroyQueryPool(ctx_.device_handle(), pool_, nullptr);
    capacity_ = std::max<uint32_t>(2 * (n + 1), 256);
    VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = capacity_;
    if (vkCreateQueryPool(ctx_.device_handle(), &qci, nullptr, &pool_) != VK_SUCCESS) {
      enabled_ = false;
      return;
    }
  }
  vkCmdResetQueryPool(cmd, pool_, 0, n + 1);
}

void KernelProfiler::stamp(VkCommandBuffer cmd, uint32_t i) {
  if (enabled_) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, i);
}

void KernelProfiler::collect(std::span<const std::string> names, Clock::time_point start,
                             Clock::time_point prepared, Clock::time_point recorded, size_t barriers) {
  if (!enabled_) return;
  const Clock::time_point end = Clock::now();
  const auto ms = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  if (passes_ > 0 && ms(last_end_, start) < 1000) between_ms_ += ms(last_end_, start);
  last_end_ = end;
  const auto n = static_cast<uint32_t>(names.size());
  std::vector<uint64_t> ticks(n + 1);
  if (vkGetQueryPoolResults(ctx_.device_handle(), pool_, 0, n + 1, ticks.size() * sizeof(uint64_t), ticks.data(),
                            sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS) {
    return;
  }
  const double ms_per_tick = ctx_.limits().timestampPeriod / 1e6;
  for (uint32_t i = 0; i < n; ++i) {
    Total& t = totals_[names[i]];
    t.ms += static_cast<double>(ticks[i + 1] - ticks[i]) * ms_per_tick;
    ++t.calls;
  }
  host_ms_ += ms(start, end);
  prepare_ms_ += ms(start, prepared);
  record_ms_ += ms(start, recorded);
  ++passes_;
  dispatches_ += n;
  barriers_ += barriers;
}

}  // namespace paddock
