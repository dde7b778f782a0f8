#include "backend/vulkan/vulkan_device.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

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

TEST(VulkanDeviceList, FreeMemoryIsOfTheLargestLocalHeap) {
  const std::vector<VulkanDeviceInfo> ds = list_vulkan_devices();
  ASSERT_FALSE(ds.empty()) << "lavapipe, at least";
  for (const VulkanDeviceInfo& d : ds) {
    EXPECT_GT(d.local_bytes, 0u) << d.name;
    EXPECT_GT(d.free_bytes, 0u) << d.name;
    EXPECT_LE(d.free_bytes, d.local_bytes) << d.name;
  }
}

// A machine's devices: lavapipe, an integrated GPU and two discrete ones.
std::vector<VulkanDeviceInfo> devices() {
  std::vector<VulkanDeviceInfo> out;
  for (const char* type : {"cpu", "integrated", "discrete", "discrete"}) {
    VulkanDeviceInfo d;
    d.index = static_cast<uint32_t>(out.size());
    d.type = type;
    d.is_cpu = d.type == "cpu";
    out.push_back(d);
  }
  return out;
}

// The index automatic_device takes, or -1 for none.
int chosen(const std::vector<VulkanDeviceInfo>& ds, std::optional<std::string> visible) {
  const VulkanDeviceInfo* d = automatic_device(ds, visible);
  return d == nullptr ? -1 : static_cast<int>(d->index);
}

TEST(VulkanDeviceChoice, DiscreteFirstAmongTheVisibleOnes) {
  const std::vector<VulkanDeviceInfo> ds = devices();
  EXPECT_EQ(chosen(ds, std::nullopt), 2);
  EXPECT_EQ(chosen({ds[0], ds[1]}, std::nullopt), 1);
  EXPECT_EQ(chosen({ds[0]}, std::nullopt), -1) << "lavapipe only when asked for";
  // GGML_VK_VISIBLE_DEVICES
  EXPECT_EQ(chosen(ds, "3,2"), 3);
  EXPECT_EQ(chosen(ds, "1"), 1);
  EXPECT_EQ(chosen(ds, "0,1"), 1);
  EXPECT_EQ(chosen(ds, "0"), 0) << "a listed CPU device is used";
  EXPECT_EQ(chosen(ds, "-1"), -1) << "Ollama's way to keep the GPUs out";
  EXPECT_EQ(chosen(ds, "7"), -1);
  EXPECT_EQ(chosen(ds, ""), -1);
  EXPECT_EQ(chosen(ds, "x,1,"), 1) << "what is not an index is skipped";
}

}  // namespace
}  // namespace paddock
