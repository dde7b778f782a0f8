#include "backend/vulkan/pipelines.h"

#include <array>

#include "backend/vulkan/shaders.h"

namespace paddock {

Pipelines::Pipelines(VkDevice device) : device_(device) {}

Pipelines::~Pipelines() {
  for (auto& [name, p] : pipelines_) vkDestroyPipeline(device_, p, nullptr);
  if (layout_ != VK_NULL_HANDLE) vkDestroyPipelineLayout(device_, layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
}

Status Pipelines::init() {
  std::array<VkDescriptorSetLayoutBinding, kSetBindings> bindings{};
  for (uint32_t i = 0; i < kSetBindings; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dci.bindingCount = kSetBindings;
  dci.pBindings = bindings.data();
  if (vkCreateDescriptorSetLayout(device_, &dci, nullptr, &set_layout_) != VK_SUCCESS) {
    return internal_error("vulkan: creating the descriptor set layout failed");
  }
  const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t)};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.setLayoutCount = 1;
  lci.pSetLayouts = &set_layout_;
  lci.pushConstantRangeCount = 1;
  lci.pPushConstantRanges = &push;
  if (vkCreatePipelineLayout(device_, &lci, nullptr, &layout_) != VK_SUCCESS) {
    return internal_error("vulkan: creating the pipeline layout failed");
  }
  return Status::ok();
}

Result<VkPipeline> Pipelines::get(const std::string& name) {
  if (auto it = pipelines_.find(name); it != pipelines_.end()) return it->second;
  const std::span<const uint32_t> spirv = shader_spirv(name);
  if (spirv.empty()) return internal_error("vulkan: no shader " + name + " in this build");
  VkShaderModuleCreateInfo mci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mci.codeSize = spirv.size_bytes();
  mci.pCode = spirv.data();
  VkShaderModule module;
  if (vkCreateShaderModule(device_, &mci, nullptr, &module) != VK_SUCCESS) {
    return internal_error("vulkan: loading shader " + name + " failed");
  }
  VkComputePipelineCreateInfo pci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pci.stage.module = module;
  pci.stage.pName = "main";
  pci.layout = layout_;
  VkPipeline pipeline;
  const VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pci, nullptr, &pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  if (r != VK_SUCCESS) return internal_error("vulkan: building pipeline " + name + " failed");
  pipelines_.emplace(name, pipeline);
  return pipeline;
}

}  // namespace paddock
