#include "backend/vulkan/vulkan_device.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "base/check.h"

namespace paddock {

namespace {

constexpr size_t kStagingBytes = size_t{32} << 20;  // uploads move in chunks of this
constexpr size_t kReadbackBytes = size_t{8} << 20;  // downloads (logits, a split pass's results)

std::string vk_error(const std::string& what, VkResult r) {
  return std::string("vulkan: ") + what + " failed (VkResult " + std::to_string(static_cast<int>(r)) + ")";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// The process's one instance, made on first use and never destroyed: destroying it unloads
// the drivers, whose leftovers (lavapipe's) sanitizers then report as leaks from unnamed
// code, and every backend or device listing would pay the loader's start-up again.
Result<VkInstance> make_instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "paddock";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&ci, nullptr, &instance);
  if (r != VK_SUCCESS) return unsupported(vk_error("creating an instance (is a Vulkan driver installed?)", r));
  return instance;
}

Result<VkInstance> create_instance() {
  static const Result<VkInstance> instance = make_instance();
  return instance;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> out(n);
  vkEnumeratePhysicalDevices(instance, &n, out.data());
  out.resize(n);
  return out;
}

bool has_extension(VkPhysicalDevice p, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(p, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(p, nullptr, &n, exts.data());
  return std::any_of(exts.begin(), exts.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

// The largest device-local heap: its index and size.
std::pair<uint32_t, uint64_t> largest_local_heap(VkPhysicalDevice p) {
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(p, &mem);
  std::pair<uint32_t, uint64_t> out{0, 0};
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
    if ((mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        mem.memoryHeaps[h].size > out.second) {
      out = {h, mem.memoryHeaps[h].size};
    }
  }
  return out;
}

// A heap's size and what is free of it: VK_EXT_memory_budget's budget less this process's
// use where the device has it (a physical-device query: no device need be open), else all.
DeviceMemory heap_memory(VkPhysicalDevice p, uint32_t heap, bool has_budget) {
  VkPhysicalDeviceMemoryProperties2 mem{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  if (has_budget) mem.pNext = &budget;
  vkGetPhysicalDeviceMemoryProperties2(p, &mem);
  DeviceMemory out;
  out.total = mem.memoryProperties.memoryHeaps[heap].size;
  out.free = out.total;
  if (has_budget) {
    const uint64_t used = budget.heapUsage[heap];
    const uint64_t cap = std::min<uint64_t>(budget.heapBudget[heap], out.total);
    out.free = cap > used ? cap - used : 0;
  }
  return out;
}

VulkanDeviceInfo describe(VkPhysicalDevice p, uint32_t index) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(p, &props);
  VulkanDeviceInfo info;
  info.index = index;
  info.name = props.deviceName;
  info.type = type_name(props.deviceType);
  info.is_cpu = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const auto [heap, bytes] = largest_local_heap(p);
  info.local_bytes = bytes;
  info.free_bytes =
      bytes == 0 ? 0 : heap_memory(p, heap, has_extension(p, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME)).free;
  return info;
}

std::string device_list(const std::vector<VulkanDeviceInfo>& infos) {
  std::string out;
  for (const VulkanDeviceInfo& d : infos) {
    out += (out.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name + " (" + d.type + ")";
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<VulkanDeviceInfo> list_vulkan_devices() {
  Result<VkInstance> instance = create_instance();
  if (!instance.ok()) return {};
  std::vector<VulkanDeviceInfo> out;
  const std::vector<VkPhysicalDevice> ps = physical_devices(*instance);
  for (uint32_t i = 0; i < ps.size(); ++i) out.push_back(describe(ps[i], i));
  return out;
}

void record_copies_to_host(VkCommandBuffer cmd) {
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                       nullptr, 0, nullptr);
}

const VulkanDeviceInfo* automatic_device(const std::vector<VulkanDeviceInfo>& devices,
                                         const std::optional<std::string>& visible) {
  std::vector<const VulkanDeviceInfo*> listed;
  if (!visible) {
    for (const VulkanDeviceInfo& d : devices) listed.push_back(&d);
  } else {
    for (size_t at = 0; at <= visible->size();) {
      const size_t end = std::min(visible->find(',', at), visible->size());
      const std::string id = visible->substr(at, end - at);
      const bool numeric =
          !id.empty() && std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); });
      for (const VulkanDeviceInfo& d : devices) {
        if (numeric && std::to_string(d.index) == id) listed.push_back(&d);
      }
      at = end + 1;
    }
  }
  for (const char* want : {"discrete", "integrated", "virtual", "other", "cpu"}) {
    if (!visible && std::string_view(want) == "cpu") break;  // lavapipe only when asked for
    for (const VulkanDeviceInfo* d : listed) {
      if (d->type == want) return d;
    }
  }
  return nullptr;
}

const VulkanDeviceInfo* named_device(const std::vector<VulkanDeviceInfo>& devices,
                                     const std::string& selector) {
  const bool numeric =
      std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); });
  for (const VulkanDeviceInfo& d : devices) {
    if (numeric ? std::to_string(d.index) == selector
                : lower(d.name).find(lower(selector)) != std::string::npos) {
      return &d;
    }
  }
  return nullptr;
}

const VulkanDeviceInfo* selected_device(const std::vector<VulkanDeviceInfo>& devices,
                                        const std::string& selector) {
  if (!selector.empty()) return named_device(devices, selector);
  const char* visible = std::getenv("GGML_VK_VISIBLE_DEVICES");
  return automatic_device(devices, visible != nullptr ? std::optional<std::string>(visible) : std::nullopt);
}

Result<std::shared_ptr<VulkanContext>> open_vulkan(const std::string& selector) {
  PADDOCK_ASSIGN(VkInstance instance, create_instance());
  const std::vector<VkPhysicalDevice> ps = physical_devices(instance);
  std::vector<VulkanDeviceInfo> infos;
  for (uint32_t i = 0; i < ps.size(); ++i) infos.push_back(describe(ps[i], i));
  const VulkanDeviceInfo* d = selected_device(infos, selector);
  const int chosen = d != nullptr ? static_cast<int>(d->index) : -1;
  if (chosen < 0) {
    const std::string devices = " (devices: " + device_list(infos) + ")";
    if (!selector.empty())
      return not_found("vulkan: no device matches PADDOCK_VULKAN_DEVICE=" + selector + devices);
    if (const char* visible = std::getenv("GGML_VK_VISIBLE_DEVICES")) {
      return not_found("vulkan: no device among GGML_VK_VISIBLE_DEVICES=" + std::string(visible) + devices);
    }
    return not_found(
        "vulkan: no GPU found" + devices +
        "; a CPU device is used only when PADDOCK_VULKAN_DEVICE or GGML_VK_VISIBLE_DEVICES names it");
  }
  std::shared_ptr<VulkanContext> ctx(new VulkanContext());
  PADDOCK_TRY(ctx->init(instance, ps[static_cast<size_t>(chosen)], infos[static_cast<size_t>(chosen)]));
  return ctx;
}

Status VulkanContext::init(VkInstance instance, VkPhysicalDevice physical, VulkanDeviceInfo info) {
  static_cast<void>(instance);
  physical_ = physical;
  info_ = std::move(info);
  name_ = "vulkan" + std::to_string(info_.index) + " (" + info_.name + ")";
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical, &props);
  limits_ = props.limits;

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f11.pNext = &f12;
  VkPhysicalDeviceShaderIntegerDotProductFeatures fdot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  const bool has_dot = has_extension(physical, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  if (has_dot) f12.pNext = &fdot;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(physical, &f2);
  info_.int_dot = has_dot && fdot.shaderIntegerDotProduct;
  if (info_.int_dot) {
    VkPhysicalDeviceShaderIntegerDotProductProperties pdot{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &pdot;
    vkGetPhysicalDeviceProperties2(physical, &p2);
    info_.int_dot_accelerated = pdot.integerDotProduct4x8BitPackedSignedAccelerated;
  }
  if (!f11.storageBuffer16BitAccess || !f12.storageBuffer8BitAccess) {
    return unsupported("vulkan: " + info_.name + " lacks 8- and 16-bit storage buffer access, which the kernels need");
  }
  // Only what the kernels use.
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  e11.pNext = &e12;
  e11.storageBuffer16BitAccess = VK_TRUE;
  e12.storageBuffer8BitAccess = VK_TRUE;
  e12.shaderInt8 = f12.shaderInt8;
  VkPhysicalDeviceFeatures2 e2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  e2.pNext = &e11;
  e2.features.shaderInt16 = f2.features.shaderInt16;
  VkPhysicalDeviceShaderIntegerDotProductFeatures edot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  edot.shaderIntegerDotProduct = VK_TRUE;
  if (info_.int_dot) e12.pNext = &edot;

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, qs.data());
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nq && family == UINT32_MAX; ++i) {
    if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
  }
  if (family == UINT32_MAX) return unsupported("vulkan: " + info_.name + " has no compute queue");

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  std::vector<const char*> exts;
  has_budget_ = has_extension(physical, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (has_budget_) exts.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (info_.int_dot) exts.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &e2;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  dci.ppEnabledExtensionNames = exts.data();
  VkResult r = vkCreateDevice(physical, &dci, nullptr, &device_);
  if (r != VK_SUCCESS) return unsupported(vk_error("creating the device", r));
  vkGetDeviceQueue(device_, family, 0, &queue_);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = family;
  r = vkCreateCommandPool(device_, &pci, nullptr, &pool_);
  if (r != VK_SUCCESS) return internal_error(vk_error("creating a command pool", r));

  local_heap_ = largest_local_heap(physical).first;
  PADDOCK_ASSIGN(staging_, alloc_mapped(kStagingBytes));
  PADDOCK_ASSIGN(readback_, alloc_mapped(kReadbackBytes, true));
  return Status::ok();
}

VulkanContext::~VulkanContext() {
  if (device_ != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device_);
    release(staging_);
    release(readback_);
    for (VkFence f : fences_) vkDestroyFence(device_, f, nullptr);
    if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
}

DeviceMemory VulkanContext::memory() const { return heap_memory(physical_, local_heap_, has_budget_); }

std::optional<uint32_t> pick_memory_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t bits,
                                         VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
  for (const VkMemoryPropertyFlags flags : {want | prefer, want}) {
    for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & flags) == flags) return i;
    }
  }
  return std::nullopt;
}

Status VulkanContext::create_buffer(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags props,
                                    VkMemoryPropertyFlags prefer, VkBuffer* buffer, VkDeviceMemory* memory) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = (std::max<size_t>(bytes, 16) + 3) & ~size_t{3};  // fills work in words
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(device_, &bci, nullptr, buffer);
  if (r != VK_SUCCESS) return Status(Code::kResourceExhausted, vk_error("creating a buffer", r));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, *buffer, &req);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
  const std::optional<uint32_t> type = pick_memory_type(mem, req.memoryTypeBits, props, prefer);
  if (!type) {
    vkDestroyBuffer(device_, *buffer, nullptr);
    return unsupported("vulkan: no memory type with the properties needed");
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  r = vkAllocateMemory(device_, &mai, nullptr, memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, *buffer, nullptr);
    return Status(Code::kResourceExhausted, "vulkan: " + std::to_string(bytes >> 20) + " MiB do not fit in " +
                                                info_.name + "'s memory (VkResult " +
                                                std::to_string(static_cast<int>(r)) + ")");
  }
  vkBindBufferMemory(device_, *buffer, *memory, 0);
  return Status::ok();
}

Result<std::unique_ptr<Buffer>> VulkanContext::alloc(size_t bytes) {
  VkBuffer buffer;
  VkDeviceMemory memory;
  PADDOCK_TRY(create_buffer(bytes,
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, &buffer, &memory));
  return std::unique_ptr<Buffer>(std::make_unique<VulkanBuffer>(shared_from_this(), buffer, memory, bytes));
}

Result<MappedBuffer> VulkanContext::alloc_mapped(size_t bytes, bool host_reads) {
  MappedBuffer b;
  b.size = bytes;
  PADDOCK_TRY(create_buffer(bytes,
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                            host_reads ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0, &b.buffer, &b.memory));
  void* p = nullptr;
  const VkResult r = vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &p);
  if (r != VK_SUCCESS) {
    release(b);
    return internal_error(vk_error("mapping memory", r));
  }
  b.data = static_cast<uint8_t*>(p);
  return b;
}

void VulkanContext::release(MappedBuffer& b) {
  if (b.buffer != VK_NULL_HANDLE) note_buffer_freed();
  if (b.buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.memory != VK_NULL_HANDLE) vkFreeMemory(device_, b.memory, nullptr);
  b = MappedBuffer{};
}

Status VulkanContext::submit(const std::function<void(VkCommandBuffer)>& record) const {
  return submit_parts(1, [&](VkCommandBuffer cmd, size_t) { record(cmd); });
}

Status VulkanContext::submit_parts(size_t parts, const std::function<void(VkCommandBuffer, size_t)>& record) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  VkResult r = VK_SUCCESS;
  size_t submitted = 0;
  for (; submitted < parts; ++submitted) {
    if (submitted == cmds_.size()) {
      VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      cai.commandPool = pool_;
      cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      cai.commandBufferCount = 1;
      VkCommandBuffer cmd = VK_NULL_HANDLE;
      r = vkAllocateCommandBuffers(device_, &cai, &cmd);
      if (r != VK_SUCCESS) break;
      cmds_.push_back(cmd);
      VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      VkFence fence = VK_NULL_HANDLE;
      r = vkCreateFence(device_, &fci, nullptr, &fence);
      if (r != VK_SUCCESS) {
        vkFreeCommandBuffers(device_, pool_, 1, &cmd);
        cmds_.pop_back();
        break;
      }
      fences_.push_back(fence);
    }
    VkCommandBuffer cmd = cmds_[submitted];
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkResetCommandBuffer(cmd, 0);
    vkBeginCommandBuffer(cmd, &bi);
    record(cmd, submitted);
    vkEndCommandBuffer(cmd);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    r = vkQueueSubmit(queue_, 1, &si, fences_[submitted]);
    if (r != VK_SUCCESS) break;
  }
  if (submitted > 0) {  // whatever went in must finish before its buffers are reused
    const auto n = static_cast<uint32_t>(submitted);
    const VkResult waited = vkWaitForFences(device_, n, fences_.data(), VK_TRUE, UINT64_MAX);
    vkResetFences(device_, n, fences_.data());
    if (r == VK_SUCCESS) r = waited;
  }
  if (r != VK_SUCCESS) return internal_error(vk_error("running commands on " + info_.name, r));
  return Status::ok();
}

void VulkanContext::upload(VkBuffer dst, size_t offset, std::span<const uint8_t> bytes) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (size_t done = 0; done < bytes.size();) {
    const size_t n = std::min(bytes.size() - done, staging_.size);
    std::memcpy(staging_.data, bytes.data() + done, n);
    const Status st = submit([&](VkCommandBuffer cmd) {
      const VkBufferCopy region{0, offset + done, n};
      vkCmdCopyBuffer(cmd, staging_.buffer, dst, 1, &region);
    });
    PADDOCK_CHECK(st.is_ok());
    done += n;
  }
}

void VulkanContext::download(VkBuffer src, size_t offset, std::span<uint8_t> bytes) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (size_t done = 0; done < bytes.size();) {
    const size_t n = std::min(bytes.size() - done, readback_.size);
    const Status st = submit([&](VkCommandBuffer cmd) {
      const VkBufferCopy region{offset + done, 0, n};
      vkCmdCopyBuffer(cmd, src, readback_.buffer, 1, &region);
      record_copies_to_host(cmd);
    });
    PADDOCK_CHECK(st.is_ok());
    std::memcpy(bytes.data() + done, readback_.data, n);
    done += n;
  }
}

VulkanBuffer::VulkanBuffer(std::shared_ptr<VulkanContext> ctx, VkBuffer buffer, VkDeviceMemory memory, size_t size)
    : ctx_(std::move(ctx)), buffer_(buffer), memory_(memory), size_(size) {}

VulkanBuffer::~VulkanBuffer() {
  ctx_->note_buffer_freed();
  vkDestroyBuffer(ctx_->device_handle(), buffer_, nullptr);
  vkFreeMemory(ctx_->device_handle(), memory_, nullptr);
}

Device& VulkanBuffer::device() const { return *ctx_; }

void VulkanBuffer::set(size_t offset, std::span<const uint8_t> bytes) {
  PADDOCK_CHECK(offset <= size_ && bytes.size() <= size_ - offset);
  ctx_->upload(buffer_, offset, bytes);
}

void VulkanBuffer::get(size_t offset, std::span<uint8_t> bytes) const {
  PADDOCK_CHECK(offset <= size_ && bytes.size() <= size_ - offset);
  ctx_->download(buffer_, offset, bytes);
}

void VulkanBuffer::copy_from(const Buffer& src, size_t src_offset, size_t offset, size_t n) {
  PADDOCK_CHECK(offset <= size_ && n <= size_ - offset && src_offset <= src.size() && n <= src.size() - src_offset);
  if (n == 0) return;
  const auto* vsrc = dynamic_cast<const VulkanBuffer*>(&src.storage());
  if (vsrc == nullptr || &vsrc->context() != ctx_.get()) {
    // From another device: through host memory.
    std::vector<uint8_t> bytes(n);
    src.get(src_offset, bytes);
    set(offset, bytes);
    return;
  }
  const bool overlap = vsrc == this && src_offset < offset + n && offset < src_offset + n;
  if (overlap) {  // vkCmdCopyBuffer forbids overlapping regions
    std::vector<uint8_t> bytes(n);
    get(src_offset, bytes);
    set(offset, bytes);
    return;
  }
  const Status st = ctx_->submit([&](VkCommandBuffer cmd) {
    const VkBufferCopy region{src_offset, offset, n};
    vkCmdCopyBuffer(cmd, vsrc->handle(), buffer_, 1, &region);
  });
  PADDOCK_CHECK(st.is_ok());
}

void VulkanBuffer::clear() {
  const Status st = ctx_->submit([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, buffer_, 0, VK_WHOLE_SIZE, 0); });
  PADDOCK_CHECK(st.is_ok());
}

}  // namespace paddock
