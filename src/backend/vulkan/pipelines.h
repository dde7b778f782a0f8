// Compute pipelines of a Vulkan device, built on first use from shader_spirv() and kept for
// the device's life. Every kernel has one layout: binding 0 = the pass's parameter words,
// bindings 1..5 = dst and src0..src3 as storage buffers, binding 6 = the backend's scratch
// buffer (kernels.h ParamWriter::scratch_counters); one push constant, the word where the
// node's parameters start (shaders/common.glsl).
#pragma once

#include <vulkan/vulkan.h>

#include <map>
#include <string>
#include <string_view>

#include "backend/vulkan/vulkan_device.h"
#include "base/status.h"

namespace paddock {

inline constexpr uint32_t kKernelBindings = 6;  // the parameters and the node's tensors
inline constexpr uint32_t kScratchBinding = 6;
inline constexpr uint32_t kSetBindings = 7;

class Pipelines {
 public:
  explicit Pipelines(VkDevice device);
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;
  ~Pipelines();

  Status init();
  // kInternal when the binary holds no such shader (a table naming a variant not built).
  Result<VkPipeline> get(const std::string& name);
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }

 private:
  VkDevice device_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::map<std::string, VkPipeline, std::less<>> pipelines_;
};

}  // namespace paddock
