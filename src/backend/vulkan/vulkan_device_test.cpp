#include "backend/vulkan/vulkan_device.h"

#include <gtest/gtest.h>

namespace paddock {
namespace {

constexpr VkMemoryPropertyFlags kLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kMapped =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

// A discrete GPU's memory types as NVIDIA's driver lists them: device memory, uncached
// (write-combined) host memory before cached host memory, and the BAR window.
VkPhysicalDeviceMemoryProperties discrete_gpu() {
  VkPhysicalDeviceMemoryProperties mem{};
  mem.memoryTypeCount = 4;
  mem.memoryTypes[0].propertyFlags = kLocal;
  mem.memoryTypes[1].propertyFlags = kMapped;
  mem.memoryTypes[2].propertyFlags = kMapped | kCached;
  mem.memoryTypes[3].propertyFlags = kLocal | kMapped;
  return mem;
}

TEST(VulkanMemoryType, ReadbacksTakeCachedHostMemoryWhereThereIsSome) {
  const VkPhysicalDeviceMemoryProperties mem = discrete_gpu();
  EXPECT_EQ(pick_memory_type(mem, 0xF, kMapped, kCached), 2u);
  EXPECT_EQ(pick_memory_type(mem, 0xF, kMapped, 0), 1u);        // uploads: the first mapped type
  EXPECT_EQ(pick_memory_type(mem, 0xB, kMapped, kCached), 1u);  // the buffer cannot take type 2
  EXPECT_EQ(pick_memory_type(mem, 0xF, kLocal, 0), 0u);
  EXPECT_FALSE(pick_memory_type(mem, 0x1, kMapped, kCached).has_value());
}

}  // namespace
}  // namespace paddock
