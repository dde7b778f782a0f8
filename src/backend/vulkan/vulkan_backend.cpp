#include "backend/vulkan/vulkan_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "backend/graph.h"
#include "backend/host_exec.h"
#include "backend/vulkan/kernels.h"
#include "backend/vulkan/pipelines.h"
#include "backend/vulkan/profiler.h"
#include "backend/vulkan/vulkan_device.h"
#include "base/check.h"
#include "base/env.h"

namespace paddock {

namespace {

const uint8_t* host_address(const TensorView& v) {
  if (v.data != nullptr) return static_cast<const uint8_t*>(v.data);
  return v.buffer != nullptr && v.buffer->host() != nullptr ? v.buffer->host() + v.offset : nullptr;
}

// A tensor as a kernel binds it: the buffer, the binding's offset and range, and where the
// view starts inside the binding.
struct Bound {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
  uint32_t start = 0;
  size_t bytes = 0;  // the view's extent from offset + start
};

// A host buffer the pass reads or writes (a split pass's compute buffer), computed on in a
// device copy: bytes the pass reads before writing them go up first, and only its results
// come back (not the whole buffer: a 512-token prompt's is tens to hundreds of MB).
struct Mirror {
  using Range = std::pair<size_t, size_t>;  // [first byte, end)
  std::vector<Range> up;       // read before written
  std::vector<Range> written;  // by the pass's nodes so far
  bool was_written(Range r) const {
    return std::any_of(written.begin(), written.end(), [&](Range w) { return w.first <= r.first && r.second <= w.second; });
  }
};

// Whether two views share bytes: views of one buffer's storage, or host memory, whose byte
// ranges meet.
bool overlaps(const TensorView& a, const TensorView& b) {
  if (a.buffer != nullptr && b.buffer != nullptr && &a.buffer->storage() == &b.buffer->storage()) {
    return a.offset < b.offset + b.extent() && b.offset < a.offset + a.extent();
  }
  const uint8_t* pa = host_address(a);
  const uint8_t* pb = host_address(b);
  return pa != nullptr && pb != nullptr && pa < pb + b.extent() && pb < pa + a.extent();
}

// Whether nodes[i], a norm, and nodes[i + 1], the multiply by its weight row, run as one
// dispatch (rms_norm.comp's MUL): the multiply reads the norm's output as its first input and
// a row [n] as its second, and nothing else reads that output, neither a later node (before
// one writes over it) nor whoever reads the pass's results (unless a later node wrote them).
bool fuses_norm_and_weight(std::span<const Node> nodes, size_t i, std::span<const TensorView> results) {
  if (i + 1 >= nodes.size()) return false;
  const Node& norm = nodes[i];
  const Node& mul = nodes[i + 1];
  if ((norm.op != Op::kRmsNorm && norm.op != Op::kNorm) || mul.op != Op::kMul || norm.dst.buffer == nullptr) {
    return false;
  }
  const TensorView& x = mul.src[0];
  const TensorView& w = mul.src[1];
  if (x.buffer != norm.dst.buffer || x.offset != norm.dst.offset || x.ne != norm.dst.ne ||
      x.nb != norm.dst.nb || !mul.dst.same_shape(x) || w.ne[0] != x.ne[0] || w.ne[1] != 1 || w.ne[2] != 1 ||
      w.ne[3] != 1) {
    return false;
  }
  // The norm's bytes that no later node has written over yet, as [first, end) ranges.
  std::vector<std::pair<size_t, size_t>> live = {{norm.dst.offset, norm.dst.offset + norm.dst.extent()}};
  const Buffer& storage = norm.dst.buffer->storage();
  const auto reads_live = [&](const TensorView& v) {
    if (v.buffer == nullptr || &v.buffer->storage() != &storage) return overlaps(v, norm.dst);
    return std::any_of(live.begin(), live.end(),
                       [&](const auto& r) { return v.offset < r.second && r.first < v.offset + v.extent(); });
  };
  for (size_t j = i + 2; j < nodes.size() && !live.empty(); ++j) {
    for (const TensorView& src : nodes[j].inputs()) {
      if (reads_live(src)) return false;
    }
    const TensorView& out = nodes[j].dst;  // a strided output leaves the bytes between its rows
    if (out.buffer == nullptr || &out.buffer->storage() != &storage || !out.is_contiguous()) continue;
    std::vector<std::pair<size_t, size_t>> left;  // live minus [out.offset, out.offset + extent)
    for (const auto& [first, end] : live) {
      if (first < out.offset) left.emplace_back(first, std::min(end, out.offset));
      if (end > out.offset + out.extent()) left.emplace_back(std::max(first, out.offset + out.extent()), end);
    }
    live = std::move(left);
  }
  // A result the multiply or a later node writes (the logits, over the norm's freed bytes)
  // holds that node's output, not the norm's.
  const auto written_later = [&](const TensorView& r) {
    return std::any_of(nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1, nodes.end(), [&](const Node& n) {
      return n.dst.buffer == r.buffer && n.dst.offset == r.offset && n.dst.ne == r.ne && n.dst.nb == r.nb;
    });
  };
  return std::none_of(results.begin(), results.end(),
                      [&](const TensorView& r) { return reads_live(r) && !written_later(r); });
}

class VulkanBackend final : public Backend {
 public:
  VulkanBackend(std::shared_ptr<VulkanContext> ctx, DeviceTraits traits)
      : ctx_(std::move(ctx)), traits_(traits), pipelines_(ctx_->device_handle()) {
    name_ = "vulkan";
  }
  ~VulkanBackend() override {
    if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(ctx_->device_handle(), pool_, nullptr);
    ctx_->release(params_);
  }
  Status init() { return pipelines_.init(); }

  std::string_view name() const override { return name_; }
  Device& device() override { return *ctx_; }
  bool supports(Op op, std::span<const DType> types) const override {
    return op < Op::kCount && vulkan_kernel(op).supports(types);
  }
  void adopt_weight_file(std::span<const uint8_t> bytes, bool release_pages) override {
    static_cast<void>(release_pages);
    adopted_.push_back(bytes);
  }
  void prepare_weight(const TensorView& w, Op use) override {
    static_cast<void>(use);
    const uint8_t* at = host_address(w);
    if (at != nullptr && is_adopted(at)) static_cast<void>(weight_copy(at, w.extent()));
  }
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                   std::span<const TensorView> results) override;

 private:
  bool is_adopted(const uint8_t* at) const {
    return std::any_of(adopted_.begin(), adopted_.end(),
                       [&](std::span<const uint8_t> f) { return at >= f.data() && at < f.data() + f.size(); });
  }
  // The device copy of `n` weight bytes at host address `at`, made on first use.
  Result<Buffer*> weight_copy(const uint8_t* at, size_t n);
  Result<Bound> bind(const TensorView& v, bool written, std::map<const Buffer*, Mirror>& mirrors);
  Status ensure_params(size_t bytes);
  Status ensure_pool(size_t sets);

  std::shared_ptr<VulkanContext> ctx_;
  DeviceTraits traits_;
  Pipelines pipelines_;
  KernelProfiler profiler_{*ctx_};
  std::string name_;
  std::vector<std::span<const uint8_t>> adopted_;
  std::map<const uint8_t*, std::unique_ptr<Buffer>> weights_;
  std::map<const Buffer*, std::unique_ptr<Buffer>> mirror_copies_;
  // A pass's parameter words: written by the host into params_, copied at the pass's start
  // into params_device_, which kernels read (device memory: every workgroup reads its words
  // first, and host memory took microseconds a read on a discrete GPU).
  MappedBuffer params_;
  std::unique_ptr<Buffer> params_device_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  size_t pool_sets_ = 0;
};

Result<Buffer*> VulkanBackend::weight_copy(const uint8_t* at, size_t n) {
  auto it = weights_.find(at);
  if (it != weights_.end() && it->second->size() >= n) return it->second.get();
  PADDOCK_ASSIGN(std::unique_ptr<Buffer> b, ctx_->alloc(n));
  b->set(0, {at, n});
  Buffer* out = b.get();
  weights_[at] = std::move(b);
  return out;
}

Result<Bound> VulkanBackend::bind(const TensorView& v, bool written, std::map<const Buffer*, Mirror>& mirrors) {
  const size_t n = v.extent();
  Bound b;
  size_t base = 0;
  size_t size = 0;
  const Buffer* storage = v.buffer != nullptr ? &v.buffer->storage() : nullptr;
  const auto* own = dynamic_cast<const VulkanBuffer*>(storage);
  const uint8_t* host = host_address(v);
  if (own != nullptr) {
    if (&own->context() != ctx_.get()) return unsupported("vulkan: a tensor lies on another Vulkan device");
    b.buffer = own->handle();
    base = v.offset;
    size = own->size();
  } else if (host != nullptr && !written && is_adopted(host)) {
    PADDOCK_ASSIGN(Buffer * w, weight_copy(host, n));
    b.buffer = static_cast<VulkanBuffer*>(w)->handle();
    size = w->size();
  } else if (storage != nullptr && storage->host() != nullptr) {
    Mirror& m = mirrors[storage];
    std::unique_ptr<Buffer>& copy = mirror_copies_[storage];
    if (copy == nullptr || copy->size() < storage->size()) {
      PADDOCK_ASSIGN(copy, ctx_->alloc(storage->size()));
    }
    const Mirror::Range r{v.offset, v.offset + n};
    if (written) {
      m.written.push_back(r);
    } else if (!m.was_written(r)) {
      m.up.push_back(r);
    }
    b.buffer = static_cast<VulkanBuffer*>(copy.get())->handle();
    base = v.offset;
    size = copy->size();
  } else {
    return unsupported("vulkan: a tensor in host memory outside any buffer or adopted weights");
  }
  const size_t align = std::max<size_t>(ctx_->limits().minStorageBufferOffsetAlignment, 4);
  b.offset = base / align * align;
  b.start = static_cast<uint32_t>(base - b.offset);
  b.range = std::min<size_t>((size - b.offset + 3) / 4 * 4, ctx_->limits().maxStorageBufferRange / 4 * 4);
  b.bytes = n;
  if (b.start + n > b.range) {
    return unsupported("vulkan: a tensor of " + std::to_string(n >> 20) + " MiB exceeds the " +
                       std::to_string(ctx_->limits().maxStorageBufferRange >> 20) +
                       " MiB a kernel can address on " + ctx_->info().name);
  }
  return b;
}

Status VulkanBackend::ensure_params(size_t bytes) {
  if (params_.size >= bytes) return Status::ok();
  ctx_->release(params_);
  params_device_.reset();
  PADDOCK_ASSIGN(params_, ctx_->alloc_mapped(std::max<size_t>(bytes * 2, 1 << 16)));
  PADDOCK_ASSIGN(params_device_, ctx_->alloc(params_.size));
  return Status::ok();
}

Status VulkanBackend::ensure_pool(size_t sets) {
  if (pool_ != VK_NULL_HANDLE && pool_sets_ >= sets) {
    vkResetDescriptorPool(ctx_->device_handle(), pool_, 0);
    return Status::ok();
  }
  if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(ctx_->device_handle(), pool_, nullptr);
  pool_sets_ = std::max<size_t>(sets * 2, 64);
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  static_cast<uint32_t>(pool_sets_ * kKernelBindings)};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = static_cast<uint32_t>(pool_sets_);
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &size;
  if (vkCreateDescriptorPool(ctx_->device_handle(), &pci, nullptr, &pool_) != VK_SUCCESS) {
    pool_ = VK_NULL_HANDLE;
    return internal_error("vulkan: creating a descriptor pool failed");
  }
  return Status::ok();
}

// One node as the pass records it.
struct Dispatch {
  VkPipeline pipeline;
  uint32_t base;  // word offset of its parameters
  uint32_t groups;
  std::array<Bound, kKernelBindings - 1> bound;  // dst, then the sources
  size_t sources = 0;
  VkDescriptorSet set = VK_NULL_HANDLE;
};

// The bytes of device buffers that the dispatches recorded since the last barrier read and
// write. A dispatch needs a barrier before it only when it reads what they write or writes
// what they read or write, so independent nodes (a layer's q, k and v products) run together
// instead of each waiting for the GPU to drain.
class Hazards {
 public:
  bool conflicts(const Dispatch& d) const {
    if (overlaps(written_, span(d.bound[0])) || overlaps(read_, span(d.bound[0]))) return true;
    for (size_t i = 1; i <= d.sources; ++i) {
      if (overlaps(written_, span(d.bound[i]))) return true;
    }
    return false;
  }
  void add(const Dispatch& d) {
    written_.push_back(span(d.bound[0]));
    for (size_t i = 1; i <= d.sources; ++i) read_.push_back(span(d.bound[i]));
  }
  void clear() {
    read_.clear();
    written_.clear();
  }

 private:
  struct Span {
    VkBuffer buffer;
    VkDeviceSize lo, hi;
  };
  static Span span(const Bound& b) { return {b.buffer, b.offset + b.start, b.offset + b.start + b.bytes}; }
  static bool overlaps(const std::vector<Span>& spans, const Span& s) {
    return std::any_of(spans.begin(), spans.end(),
                       [&](const Span& t) { return t.buffer == s.buffer && t.lo < s.hi && s.lo < t.hi; });
  }
  std::vector<Span> read_, written_;
};

Status VulkanBackend::run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                                std::span<const TensorView> results) {
  const auto start = std::chrono::steady_clock::now();
  PADDOCK_TRY(check_supported(*this, nodes));
  std::map<const Buffer*, Mirror> mirrors;
  std::vector<Dispatch> dispatches;
  std::vector<std::string> kernels;  // each dispatch's shader
  ParamWriter words;
  Node fused;
  for (size_t at = 0; at < nodes.size(); ++at) {
    const Node* node = &nodes[at];
    if (!after && fuses_norm_and_weight(nodes, at, results)) {  // tensor dumps read every node
      fused = nodes[at];
      fused.src[1] = nodes[at + 1].src[1];
      fused.n_src = 2;
      fused.dst = nodes[at + 1].dst;
      node = &fused;
      ++at;
    }
    const Node& n = *node;
    const VulkanKernel& k = vulkan_kernel(n.op);
    Dispatch d;
    kernels.push_back(k.shader(n, traits_));
    PADDOCK_ASSIGN(d.pipeline, pipelines_.get(kernels.back()));
    for (int i = 0; i < n.n_src; ++i) {  // sources first: an in-place node reads before it writes
      PADDOCK_ASSIGN(d.bound[static_cast<size_t>(i) + 1], bind(n.src[static_cast<size_t>(i)], false, mirrors));
    }
    PADDOCK_ASSIGN(d.bound[0], bind(n.dst, true, mirrors));
    d.sources = static_cast<size_t>(n.n_src);
    for (size_t i = d.sources + 1; i < d.bound.size(); ++i) d.bound[i] = d.bound[0];
    std::array<uint32_t, 5> starts{};
    for (size_t i = 0; i < starts.size(); ++i) starts[i] = d.bound[i].start;
    d.base = words.begin_node(n, starts);
    PADDOCK_ASSIGN(d.groups, k.encode(n, traits_, words));
    dispatches.push_back(d);
  }
  if (dispatches.empty()) return Status::ok();
  PADDOCK_TRY(ensure_params(words.bytes()));
  std::memcpy(params_.data, words.data(), words.bytes());
  PADDOCK_TRY(ensure_pool(dispatches.size()));

  std::vector<VkDescriptorSetLayout> layouts(dispatches.size(), pipelines_.set_layout());
  std::vector<VkDescriptorSet> sets(dispatches.size());
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = static_cast<uint32_t>(sets.size());
  ai.pSetLayouts = layouts.data();
  if (vkAllocateDescriptorSets(ctx_->device_handle(), &ai, sets.data()) != VK_SUCCESS) {
    return internal_error("vulkan: allocating descriptor sets failed");
  }
  std::vector<VkDescriptorBufferInfo> infos(dispatches.size() * kKernelBindings);
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  for (size_t i = 0; i < dispatches.size(); ++i) {
    dispatches[i].set = sets[i];
    infos[i * kKernelBindings] = {static_cast<VulkanBuffer*>(params_device_.get())->handle(), 0, VK_WHOLE_SIZE};
    for (size_t b = 0; b + 1 < kKernelBindings; ++b) {
      const Bound& bd = dispatches[i].bound[b];
      infos[i * kKernelBindings + b + 1] = {bd.buffer, bd.offset, bd.range};
    }
    for (uint32_t b = 0; b < kKernelBindings; ++b) {
      VkWriteDescriptorSet& w = writes[i * kKernelBindings + b];
      w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = sets[i];
      w.dstBinding = b;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &infos[i * kKernelBindings + b];
    }
  }

  for (auto& [host, m] : mirrors) {
    std::sort(m.up.begin(), m.up.end());
    for (size_t i = 0; i < m.up.size();) {  // overlapping and touching ranges go up as one
      Mirror::Range r = m.up[i];
      for (++i; i < m.up.size() && m.up[i].first <= r.second; ++i) r.second = std::max(r.second, m.up[i].second);
      std::vector<uint8_t> bytes(r.second - r.first);
      host->get(r.first, bytes);
      mirror_copies_[host]->set(r.first, bytes);
    }
  }
  const auto barrier = [](VkCommandBuffer cmd) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &b, 0, nullptr,
                         0, nullptr);
  };
  // Barriers go only where a dispatch depends on one since the last (Hazards), except after
  // every dispatch that runs alone (profiled, so each kernel's time is its own, or read back
  // node by node) and after the pass's last, before the host or a copy reads its results.
  Hazards hazards;
  const bool each_alone = profiler_.enabled() || static_cast<bool>(after);
  // Dispatches [from, to): their descriptor sets written, then their commands.
  const auto record = [&](VkCommandBuffer cmd, size_t from, size_t to) {
    vkUpdateDescriptorSets(ctx_->device_handle(), static_cast<uint32_t>((to - from) * kKernelBindings),
                           writes.data() + from * kKernelBindings, 0, nullptr);
    if (from == 0) {  // the pass's words onto the device before its first kernel
      const VkBufferCopy region{0, 0, words.bytes()};
      vkCmdCopyBuffer(cmd, params_.buffer, static_cast<VulkanBuffer*>(params_device_.get())->handle(), 1, &region);
      VkMemoryBarrier copied{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      copied.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      copied.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &copied, 0,
                           nullptr, 0, nullptr);
    }
    const uint32_t max_x = std::min<uint32_t>(ctx_->limits().maxComputeWorkGroupCount[0], 65535);
    for (size_t i = from; i < to; ++i) {
      const Dispatch& d = dispatches[i];
      if (hazards.conflicts(d)) {
        barrier(cmd);
        hazards.clear();
      }
      profiler_.stamp(cmd, static_cast<uint32_t>(i));
      vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline);
      vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_.layout(), 0, 1, &d.set, 0, nullptr);
      vkCmdPushConstants(cmd, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t), &d.base);
      if (d.groups > 0) vkCmdDispatch(cmd, std::min(d.groups, max_x), (d.groups + max_x - 1) / max_x, 1);
      hazards.add(d);
      if (each_alone || i + 1 == dispatches.size()) {
        barrier(cmd);
        hazards.clear();
      }
    }
    profiler_.stamp(cmd, static_cast<uint32_t>(to));
  };
  // A view the pass wrote in a mirrored host buffer, back into that buffer.
  const auto copy_back = [&](const TensorView& v) {
    if (v.buffer == nullptr) return;
    const auto it = mirrors.find(&v.buffer->storage());
    const Mirror::Range r{v.offset, v.offset + v.extent()};
    if (it == mirrors.end() || !it->second.was_written(r)) return;
    std::vector<uint8_t> bytes(r.second - r.first);
    mirror_copies_[it->first]->get(r.first, bytes);
    const_cast<Buffer*>(it->first)->set(r.first, bytes);
  };
  if (!after) {
    // Parts of 8, 16, 32, then 64 dispatches: the device starts early and runs each part while
    // the host records the next (recording costs the driver microseconds per dispatch).
    std::vector<size_t> ends;
    for (size_t end = 0, size = 8; end < dispatches.size(); size = std::min<size_t>(2 * size, 64)) {
      end = std::min(dispatches.size(), end + size);
      ends.push_back(end);
    }
    std::chrono::steady_clock::time_point recorded;
    PADDOCK_TRY(ctx_->submit_parts(ends.size(), [&](VkCommandBuffer cmd, size_t part) {
      if (part == 0) profiler_.begin(cmd, static_cast<uint32_t>(dispatches.size()));
      record(cmd, part == 0 ? 0 : ends[part - 1], ends[part]);
      recorded = std::chrono::steady_clock::now();
    }));
    for (const TensorView& r : results) copy_back(r);
    if (profiler_.enabled()) {
      const auto seconds = [&](auto to) { return std::chrono::duration<double>(to - start).count(); };
      profiler_.collect(kernels, seconds(std::chrono::steady_clock::now()), seconds(recorded));
    }
    return Status::ok();
  }
  for (size_t i = 0; i < dispatches.size(); ++i) {  // tensor dumps read each output as it is written
    PADDOCK_TRY(ctx_->submit([&](VkCommandBuffer cmd) {
      profiler_.begin(cmd, static_cast<uint32_t>(dispatches.size()));
      record(cmd, i, i + 1);
    }));
    copy_back(nodes[i].dst);
    after(nodes[i]);
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Backend>> make_vulkan_backend(const std::string& selector, bool gpu_tuning) {
  PADDOCK_ASSIGN(std::shared_ptr<VulkanContext> ctx,
                 open_vulkan(selector.empty() ? env_get_or("VULKAN_DEVICE", "") : selector));
  const DeviceTraits traits{.cpu = ctx->info().is_cpu && !gpu_tuning};
  auto be = std::make_unique<VulkanBackend>(std::move(ctx), traits);
  PADDOCK_TRY(be->init());
  return std::unique_ptr<Backend>(std::move(be));
}

}  // namespace paddock
