#include "backend/vulkan/vulkan_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>
#include <vector>

#include "backend/graph.h"
#include "backend/host_exec.h"
#include "backend/vulkan/dispatch_order.h"
#include "backend/vulkan/fusion.h"
#include "backend/vulkan/kernels.h"
#include "backend/vulkan/pipelines.h"
#include "backend/vulkan/profiler.h"
#include "backend/vulkan/vulkan_device.h"
#include "base/check.h"
#include "base/env.h"

namespace paddock {

namespace {

// A host buffer the pass reads or writes (a split pass's compute buffer), computed on in a
// device copy: bytes the pass reads before writing them go up first, and only its results
// come back (not the whole buffer: a 512-token prompt's is tens to hundreds of MB).
struct Mirror {
  using Range = std::pair<size_t, size_t>;  // [first byte, end)
  Buffer* copy = nullptr;                   // on the device (VulkanBackend::mirror_buffer)
  std::vector<Range> up;       // read before written
  std::vector<Range> written;  // by the pass's nodes so far
  bool was_written(Range r) const {
    return std::any_of(written.begin(), written.end(), [&](Range w) { return w.first <= r.first && r.second <= w.second; });
  }
};

// Bytes moving between a mirrored host buffer and its device copy inside a pass's own
// command buffers (not a submission and a wait each), through a mapped staging buffer.
struct Transfer {
  Buffer* host;
  VkBuffer device;
  size_t offset;  // in both buffers
  size_t bytes;
  size_t staged;  // offset in the staging buffer
};

// A dispatch's descriptor set contents: (buffer, offset, range) of each binding.
struct SetKey {
  std::array<uint64_t, 3 * kSetBindings> words{};
  bool operator==(const SetKey& o) const { return words == o.words; }
};
struct SetKeyHash {
  size_t operator()(const SetKey& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
    for (uint64_t w : k.words) h = (h ^ w) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

class VulkanBackend final : public Backend {
 public:
  VulkanBackend(std::shared_ptr<VulkanContext> ctx, DeviceTraits traits)
      : ctx_(std::move(ctx)), traits_(traits), pipelines_(ctx_->device_handle()) {
    name_ = "vulkan";
  }
  ~VulkanBackend() override {
    if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(ctx_->device_handle(), pool_, nullptr);
    ctx_->release(params_);
    ctx_->release(up_);
    ctx_->release(down_);
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
  Result<Buffer*> mirror_buffer(size_t bytes, const std::map<const Buffer*, Mirror>& mirrors);
  Status ensure_params(size_t bytes);
  Status ensure_mapped(MappedBuffer& b, size_t bytes, bool host_reads);
  Result<std::vector<Transfer>> stage_uploads(std::map<const Buffer*, Mirror>& mirrors);
  Result<std::vector<Transfer>> stage_downloads(std::span<const TensorView> results,
                                                const std::map<const Buffer*, Mirror>& mirrors);
  Status ensure_scratch(size_t bytes);
  Status assign_sets(std::vector<Dispatch>& dispatches);
  Status reset_pool(size_t sets);

  std::shared_ptr<VulkanContext> ctx_;
  DeviceTraits traits_;
  Pipelines pipelines_;
  KernelProfiler profiler_{*ctx_};
  std::string name_;
  std::vector<std::span<const uint8_t>> adopted_;
  std::map<const uint8_t*, std::unique_ptr<Buffer>> weights_;
  // Device buffers that mirror host buffers, kept across passes: a pass's host compute
  // buffer is a new object each pass, but lands in the same device buffer (so kept
  // descriptor sets still name it).
  std::vector<std::unique_ptr<Buffer>> mirror_pool_;
  // A pass's parameter words: written by the host into params_, copied at the pass's start
  // into params_device_, which kernels read (device memory: every workgroup reads its words
  // first, and host memory took microseconds a read on a discrete GPU).
  MappedBuffer params_;
  std::unique_ptr<Buffer> params_device_;
  // Staging for a pass's mirror uploads (host-written) and result downloads (host-read, so
  // cached memory: uncached reads of a 128k-vocabulary's logits would take milliseconds).
  MappedBuffer up_, down_;
  // Kernels' working memory within a pass (ParamWriter::scratch_counters), zeroed when made.
  std::unique_ptr<Buffer> scratch_;
  // Descriptor sets kept across passes, by their bindings: a decode step binds the same
  // buffer ranges every token, so steady decoding writes no descriptors (some 2 400 writes a
  // token for an 8B model otherwise). Dropped when the pool fills or a buffer is destroyed.
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  size_t pool_sets_ = 0;
  std::unordered_map<SetKey, VkDescriptorSet, SetKeyHash> sets_;
  uint64_t freed_seen_ = 0;
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
    if (m.copy == nullptr) {
      PADDOCK_ASSIGN(m.copy, mirror_buffer(storage->size(), mirrors));
    }
    const Mirror::Range r{v.offset, v.offset + n};
    if (written) {
      m.written.push_back(r);
    } else if (!m.was_written(r)) {
      m.up.push_back(r);
    }
    b.buffer = static_cast<VulkanBuffer*>(m.copy)->handle();
    base = v.offset;
    size = m.copy->size();
  } else {
    return unsupported("vulkan: a tensor in host memory outside any buffer or adopted weights");
  }
  // Bound from the start of a coarse window where the view fits in the range a binding may
  // have, else from its aligned offset: views near one another (each token's K/V rows, a
  // layer's weights) then share bindings, so kept descriptor sets (assign_sets) serve every
  // token. The view's place in the binding goes to the kernel as `start`.
  const size_t align = std::max<size_t>(ctx_->limits().minStorageBufferOffsetAlignment, 4);
  const size_t max_range = ctx_->limits().maxStorageBufferRange / 4 * 4;
  const size_t window = std::max(align, std::min<size_t>(max_range / 4, size_t{256} << 20) / align * align);
  b.offset = base / window * window;
  if (base - b.offset + n > std::min(max_range, size - b.offset)) b.offset = base / align * align;
  b.start = static_cast<uint32_t>(base - b.offset);
  b.range = std::min<size_t>((size - b.offset + 3) / 4 * 4, max_range);
  b.bytes = n;
  if (b.start + n > b.range) {
    return unsupported("vulkan: a tensor of " + std::to_string(n >> 20) + " MiB exceeds the " +
                       std::to_string(ctx_->limits().maxStorageBufferRange >> 20) +
                       " MiB a kernel can address on " + ctx_->info().name);
  }
  return b;
}

// A device buffer of at least `bytes` that no other host buffer of the pass (`mirrors`)
// takes: the smallest kept one that fits, else a new one, replacing free ones too small.
Result<Buffer*> VulkanBackend::mirror_buffer(size_t bytes, const std::map<const Buffer*, Mirror>& mirrors) {
  const auto taken = [&](const Buffer* b) {
    return std::any_of(mirrors.begin(), mirrors.end(), [&](const auto& m) { return m.second.copy == b; });
  };
  Buffer* best = nullptr;
  for (const std::unique_ptr<Buffer>& b : mirror_pool_) {
    if (!taken(b.get()) && b->size() >= bytes && (best == nullptr || b->size() < best->size()))
      best = b.get();
  }
  if (best != nullptr) return best;
  std::erase_if(mirror_pool_,
                [&](const std::unique_ptr<Buffer>& b) { return !taken(b.get()) && b->size() < bytes; });
  PADDOCK_ASSIGN(std::unique_ptr<Buffer> fresh, ctx_->alloc(bytes));
  mirror_pool_.push_back(std::move(fresh));
  return mirror_pool_.back().get();
}

Status VulkanBackend::ensure_mapped(MappedBuffer& b, size_t bytes, bool host_reads) {
  if (b.size >= bytes && b.buffer != VK_NULL_HANDLE) return Status::ok();
  ctx_->release(b);
  PADDOCK_ASSIGN(b, ctx_->alloc_mapped(std::max<size_t>(bytes * 2, 1 << 16), host_reads));
  return Status::ok();
}

Status VulkanBackend::ensure_params(size_t bytes) {
  if (params_.size >= bytes && params_device_ != nullptr) return Status::ok();
  params_device_.reset();
  PADDOCK_TRY(ensure_mapped(params_, bytes, false));
  PADDOCK_ASSIGN(params_device_, ctx_->alloc(params_.size));
  return Status::ok();
}

// The ranges of the mirrored host buffers the pass reads before writing, overlapping and
// touching ones merged, written into up_.
Result<std::vector<Transfer>> VulkanBackend::stage_uploads(std::map<const Buffer*, Mirror>& mirrors) {
  std::vector<Transfer> out;
  size_t total = 0;
  for (auto& [host, m] : mirrors) {
    std::sort(m.up.begin(), m.up.end());
    for (size_t i = 0; i < m.up.size();) {
      Mirror::Range r = m.up[i];
      for (++i; i < m.up.size() && m.up[i].first <= r.second; ++i)
        r.second = std::max(r.second, m.up[i].second);
      out.push_back({const_cast<Buffer*>(host), static_cast<VulkanBuffer*>(m.copy)->handle(), r.first,
                     r.second - r.first, total});
      total += (r.second - r.first + 15) / 16 * 16;
    }
  }
  if (out.empty()) return out;
  PADDOCK_TRY(ensure_mapped(up_, total, false));
  for (const Transfer& t : out) t.host->get(t.offset, {up_.data + t.staged, t.bytes});
  return out;
}

// The results the pass writes in mirrored host buffers, each given its place in down_.
Result<std::vector<Transfer>> VulkanBackend::stage_downloads(std::span<const TensorView> results,
                                                             const std::map<const Buffer*, Mirror>& mirrors) {
  std::vector<Transfer> out;
  size_t total = 0;
  for (const TensorView& v : results) {
    if (v.buffer == nullptr) continue;
    const auto it = mirrors.find(&v.buffer->storage());
    const Mirror::Range r{v.offset, v.offset + v.extent()};
    if (it == mirrors.end() || !it->second.was_written(r)) continue;
    out.push_back({const_cast<Buffer*>(it->first), static_cast<VulkanBuffer*>(it->second.copy)->handle(),
                   r.first, r.second - r.first, total});
    total += (r.second - r.first + 15) / 16 * 16;
  }
  if (!out.empty()) {
    PADDOCK_TRY(ensure_mapped(down_, total, true));
  }
  return out;
}

Status VulkanBackend::ensure_scratch(size_t bytes) {
  if (scratch_ != nullptr && scratch_->size() >= bytes) return Status::ok();
  scratch_.reset();
  PADDOCK_ASSIGN(scratch_, ctx_->alloc(std::max(bytes + bytes / 2, size_t{1} << 20)));
  scratch_->clear();  // the counters start at 0
  return Status::ok();
}

// Empties the pool (and the kept sets), grown to hold at least `sets`.
Status VulkanBackend::reset_pool(size_t sets) {
  sets_.clear();
  freed_seen_ = ctx_->buffers_freed();
  if (pool_ != VK_NULL_HANDLE && pool_sets_ >= sets) {
    vkResetDescriptorPool(ctx_->device_handle(), pool_, 0);
    return Status::ok();
  }
  if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(ctx_->device_handle(), pool_, nullptr);
  pool_sets_ = std::max<size_t>(sets * 2, 4096);
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  static_cast<uint32_t>(pool_sets_ * kSetBindings)};
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

// Gives each dispatch its descriptor set: a kept one with the same bindings, else a new one,
// written now and kept.
Status VulkanBackend::assign_sets(std::vector<Dispatch>& dispatches) {
  const VkBuffer params = static_cast<VulkanBuffer*>(params_device_.get())->handle();
  const VkBuffer scratch = static_cast<VulkanBuffer*>(scratch_.get())->handle();
  std::vector<SetKey> keys(dispatches.size());
  for (size_t i = 0; i < dispatches.size(); ++i) {
    std::array<uint64_t, 3 * kSetBindings>& w = keys[i].words;
    w[0] = reinterpret_cast<uint64_t>(params);
    w[2] = VK_WHOLE_SIZE;
    for (size_t b = 0; b + 1 < kKernelBindings; ++b) {
      const Bound& bd = dispatches[i].bound[b];
      w[3 * b + 3] = reinterpret_cast<uint64_t>(bd.buffer);
      w[3 * b + 4] = bd.offset;
      w[3 * b + 5] = bd.range;
    }
    w[3 * kScratchBinding] = reinterpret_cast<uint64_t>(scratch);
    w[3 * kScratchBinding + 2] = VK_WHOLE_SIZE;
  }
  if (pool_ == VK_NULL_HANDLE || ctx_->buffers_freed() != freed_seen_ ||
      sets_.size() + keys.size() > pool_sets_) {
    PADDOCK_TRY(reset_pool(keys.size()));
  }
  std::vector<size_t> fresh;  // dispatches whose bindings no kept set has, each key once
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto [it, added] = sets_.try_emplace(keys[i], VK_NULL_HANDLE);
    if (added) fresh.push_back(i);
  }
  if (!fresh.empty()) {
    std::vector<VkDescriptorSetLayout> layouts(fresh.size(), pipelines_.set_layout());
    std::vector<VkDescriptorSet> made(fresh.size());
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool_;
    ai.descriptorSetCount = static_cast<uint32_t>(made.size());
    ai.pSetLayouts = layouts.data();
    if (vkAllocateDescriptorSets(ctx_->device_handle(), &ai, made.data()) != VK_SUCCESS) {
      PADDOCK_TRY(reset_pool(0));  // drops this pass's unwritten entries too
      return internal_error("vulkan: allocating descriptor sets failed");
    }
    std::vector<VkDescriptorBufferInfo> infos(fresh.size() * kSetBindings);
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (size_t f = 0; f < fresh.size(); ++f) {
      const std::array<uint64_t, 3 * kSetBindings>& w = keys[fresh[f]].words;
      sets_[keys[fresh[f]]] = made[f];
      for (uint32_t b = 0; b < kSetBindings; ++b) {
        infos[f * kSetBindings + b] = {reinterpret_cast<VkBuffer>(w[3 * b]), w[3 * b + 1], w[3 * b + 2]};
        VkWriteDescriptorSet& wr = writes[f * kSetBindings + b];
        wr = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        wr.dstSet = made[f];
        wr.dstBinding = b;
        wr.descriptorCount = 1;
        wr.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        wr.pBufferInfo = &infos[f * kSetBindings + b];
      }
    }
    vkUpdateDescriptorSets(ctx_->device_handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0,
                           nullptr);
  }
  for (size_t i = 0; i < keys.size(); ++i) dispatches[i].set = sets_.at(keys[i]);
  return Status::ok();
}

Status VulkanBackend::run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                                std::span<const TensorView> results) {
  const auto start = std::chrono::steady_clock::now();
  PADDOCK_TRY(check_supported(*this, nodes));
  std::map<const Buffer*, Mirror> mirrors;
  std::vector<Dispatch> dispatches;
  std::vector<std::string> kernels;  // each dispatch's shader (profiled: and weight shape)
  ParamWriter words;
  // Activations quantized for integer-dot products in this pass, by the bytes they came
  // from and the quantizer (a layer's q, k and v products share one), until a dispatch
  // writes those bytes, or kLiveQuantized newer ones are made: then their scratch words go
  // to later quantizing (Hazards orders the reuse), so a prompt pass holds about one layer's
  // quantized activations, not every layer's (an 8B model's 512-token pass: 17 MB a layer).
  // A column needed again after that is quantized again.
  struct Quantized {
    Span from;
    std::string quantizer;
    WordRange words;
  };
  constexpr size_t kLiveQuantized = 4;  // a layer's: attention input and output, FFN input and GLU
  std::vector<Quantized> quantized;
  const auto release = [&](const Quantized& q) {
    words.release_scratch(q.words.first, q.words.second - q.words.first);
  };
  std::vector<const Node*> finishes;  // per dispatch: the graph node it completes, if any
  const auto push = [&](const Dispatch& d, std::string kernel, const Node* node) {
    if (d.writes_dst) {
      std::erase_if(quantized, [&](const Quantized& q) {
        if (!q.from.meets(span(d.bound[0]))) return false;
        release(q);
        return true;
      });
    }
    dispatches.push_back(d);
    kernels.push_back(std::move(kernel));
    finishes.push_back(node);
  };
  // Scratch words for x's columns quantized, the oldest quantized columns' given back first
  // where kLiveQuantized are held.
  const auto quantized_columns = [&](const TensorView& x) {
    const uint32_t n = quantized_words(x.ne[0]) * static_cast<uint32_t>(x.ne[1] * x.ne[2]);
    if (quantized.size() == kLiveQuantized) {
      release(quantized.front());
      quantized.erase(quantized.begin());
    }
    const uint32_t first = words.reused_scratch_words(n);
    return WordRange{first, first + n};
  };
  // The scratch words of x's columns quantized by `quantizer` (quantize_q8.comp, or the norm
  // that wrote x), made now if not yet.
  const auto quantize = [&](const TensorView& x, const Bound& from,
                            const std::string& quantizer) -> Result<WordRange> {
    for (const Quantized& q : quantized) {
      if (q.from == span(from) && q.quantizer == quantizer) return q.words;
    }
    Node q;
    q.dst = x;
    q.src[0] = x;
    q.n_src = 1;
    Dispatch d;
    PADDOCK_ASSIGN(d.pipeline, pipelines_.get(quantizer));
    d.bound.fill(from);
    d.sources = 1;
    d.writes_dst = false;
    const int64_t columns = x.ne[1] * x.ne[2];
    d.scratch_out = quantized_columns(x);
    std::array<uint32_t, 5> starts{};
    starts.fill(from.start);
    d.base = words.begin_node(q, starts);
    words.op(kQuantizedOpWord, d.scratch_out.first);
    d.groups = static_cast<uint32_t>((x.ne[0] / 32 * columns + 63) / 64);  // an invocation per 32 values
    push(d, quantizer, nullptr);
    quantized.push_back({span(from), quantizer, d.scratch_out});
    return d.scratch_out;
  };
  Node fused;
  for (size_t at = 0; at < nodes.size(); ++at) {
    const Node* node = &nodes[at];
    const size_t count =
        after ? 1 : fused_nodes(nodes, at, results, traits_, fused);  // dumps read every node
    if (count > 1) {
      node = &fused;
      at += count - 1;
    }
    const Node& n = *node;
    const VulkanKernel& k = vulkan_kernel(n.op);
    Dispatch d;
    // A norm whose output an integer-dot product reads quantizes it too (rms_norm_mul_q8_*).
    std::string quantizer;
    if (n.op == Op::kRmsNorm && n.n_src == 2) {
      if (const Node* reader = int_dot_reader(nodes, at, n.dst, traits_))
        quantizer = activation_quantizer(*reader);
    }
    std::string kernel =
        k.shader(n, traits_) + (quantizer.empty() ? "" : quantizer.substr(quantizer.find('_')));
    PADDOCK_ASSIGN(d.pipeline, pipelines_.get(kernel));
    if (profiler_.enabled() && kernel.starts_with("mul_m")) {  // products: time each weight shape apart
      kernel += " " + std::to_string(n.src[0].ne[0]) + "x" + std::to_string(n.src[0].ne[1]);
    }
    for (int i = 0; i < n.n_src; ++i) {  // sources first: an in-place node reads before it writes
      PADDOCK_ASSIGN(d.bound[static_cast<size_t>(i) + 1], bind(n.src[static_cast<size_t>(i)], false, mirrors));
    }
    PADDOCK_ASSIGN(d.bound[0], bind(n.dst, true, mirrors));
    d.sources = static_cast<size_t>(n.n_src);
    for (size_t i = d.sources + 1; i < d.bound.size(); ++i) d.bound[i] = d.bound[0];
    if (int_dot_product(n, traits_)) {
      PADDOCK_ASSIGN(d.scratch_in, quantize(n.src[1], d.bound[2], activation_quantizer(n)));
    }
    if (!quantizer.empty()) d.scratch_out = quantized_columns(n.dst);
    std::array<uint32_t, 5> starts{};
    for (size_t i = 0; i < starts.size(); ++i) starts[i] = d.bound[i].start;
    d.base = words.begin_node(n, starts);
    PADDOCK_ASSIGN(d.groups, k.encode(n, traits_, words));
    if (d.scratch_in.second > 0) words.op(kQuantizedOpWord, d.scratch_in.first);
    if (d.scratch_out.second > 0) words.op(kQuantizedOpWord, d.scratch_out.first);
    push(d, std::move(kernel), &nodes[at]);  // by node (dumps), nothing is fused
    if (!quantizer.empty()) quantized.push_back({span(d.bound[0]), quantizer, d.scratch_out});
  }
  if (dispatches.empty()) return Status::ok();
  PADDOCK_TRY(ensure_params(words.bytes()));
  PADDOCK_TRY(ensure_scratch(words.scratch_bytes()));
  std::memcpy(params_.data, words.data(), words.bytes());
  PADDOCK_TRY(assign_sets(dispatches));

  PADDOCK_ASSIGN(const std::vector<Transfer> ups, stage_uploads(mirrors));
  std::vector<Transfer> downs;
  if (!after) {  // a node-by-node run copies each output back as it is written
    PADDOCK_ASSIGN(downs, stage_downloads(results, mirrors));
  }
  // Staged bytes between up_ or down_ and the mirrors, in the command buffer.
  const auto copy = [](VkCommandBuffer cmd, VkBuffer staging, std::span<const Transfer> ts, bool up) {
    for (const Transfer& t : ts) {
      const VkBufferCopy region{up ? t.staged : t.offset, up ? t.offset : t.staged, t.bytes};
      vkCmdCopyBuffer(cmd, up ? staging : t.device, up ? t.device : staging, 1, &region);
    }
  };
  const auto barrier = [](VkCommandBuffer cmd) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &b, 0, nullptr,
                         0, nullptr);
  };
  // Barriers go only where a dispatch depends on one since the last (DispatchOrder), except
  // after every dispatch that runs alone (profiled, so each kernel's time is its own, or read
  // back node by node), which keep the nodes' order, and after the pass's last, before the
  // host or a copy reads its results.
  DispatchOrder order(dispatches);
  const bool each_alone = profiler_.enabled() || static_cast<bool>(after);
  // Steps [from, to) of the recording: their commands.
  const auto record = [&](VkCommandBuffer cmd, size_t from, size_t to) {
    if (from == 0) {  // the pass's inputs and words onto the device before its first kernel
      copy(cmd, up_.buffer, ups, true);
      const VkBufferCopy region{0, 0, words.bytes()};
      vkCmdCopyBuffer(cmd, params_.buffer, static_cast<VulkanBuffer*>(params_device_.get())->handle(), 1, &region);
      VkMemoryBarrier copied{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      copied.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      copied.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;  // in-place nodes too
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &copied, 0,
                           nullptr, 0, nullptr);
    }
    const uint32_t max_x = std::min<uint32_t>(ctx_->limits().maxComputeWorkGroupCount[0], 65535);
    for (size_t i = from; i < to; ++i) {
      const Step step = each_alone ? Step{i, false} : order.next();
      const Dispatch& d = dispatches[step.dispatch];
      if (step.barrier_before) barrier(cmd);
      profiler_.stamp(cmd, static_cast<uint32_t>(i));
      vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline);
      vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_.layout(), 0, 1, &d.set, 0, nullptr);
      vkCmdPushConstants(cmd, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t), &d.base);
      if (d.groups > 0) vkCmdDispatch(cmd, std::min(d.groups, max_x), (d.groups + max_x - 1) / max_x, 1);
      if (each_alone || i + 1 == dispatches.size()) barrier(cmd);
    }
    profiler_.stamp(cmd, static_cast<uint32_t>(to));
    if (to == dispatches.size() && !downs.empty()) {  // after the last barrier: results to the host
      copy(cmd, down_.buffer, downs, false);
      record_copies_to_host(cmd);
    }
  };
  // A view the pass wrote in a mirrored host buffer, back into that buffer (node by node).
  const auto copy_back = [&](const TensorView& v) {
    if (v.buffer == nullptr) return;
    const auto it = mirrors.find(&v.buffer->storage());
    const Mirror::Range r{v.offset, v.offset + v.extent()};
    if (it == mirrors.end() || !it->second.was_written(r)) return;
    std::vector<uint8_t> bytes(r.second - r.first);
    it->second.copy->get(r.first, bytes);
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
    const auto prepared = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point recorded;
    PADDOCK_TRY(ctx_->submit_parts(ends.size(), [&](VkCommandBuffer cmd, size_t part) {
      if (part == 0) profiler_.begin(cmd, static_cast<uint32_t>(dispatches.size()));
      record(cmd, part == 0 ? 0 : ends[part - 1], ends[part]);
      recorded = std::chrono::steady_clock::now();
    }));
    for (const Transfer& t : downs) t.host->set(t.offset, {down_.data + t.staged, t.bytes});
    size_t barriers = 0;  // as the pass would have been recorded unprofiled
    if (profiler_.enabled()) {
      DispatchOrder unprofiled(dispatches);
      for (size_t i = 0; i < dispatches.size(); ++i) barriers += unprofiled.next().barrier_before ? 1 : 0;
      ++barriers;  // after the last
    }
    profiler_.collect(kernels, start, prepared, recorded, barriers);
    return Status::ok();
  }
  for (size_t i = 0; i < dispatches.size(); ++i) {  // tensor dumps read each output as it is written
    PADDOCK_TRY(ctx_->submit([&](VkCommandBuffer cmd) {
      profiler_.begin(cmd, static_cast<uint32_t>(dispatches.size()));
      record(cmd, i, i + 1);
    }));
    if (finishes[i] == nullptr) continue;
    copy_back(finishes[i]->dst);
    after(*finishes[i]);
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Backend>> make_vulkan_backend(const std::string& selector, VulkanTuning tuning) {
  PADDOCK_ASSIGN(std::shared_ptr<VulkanContext> ctx,
                 open_vulkan(selector.empty() ? env_get_or("VULKAN_DEVICE", "") : selector));
  // PADDOCK_VULKAN_TUNING=gpu: a CPU device (lavapipe) runs the GPU kernels and fusions, as
  // golden tests check end to end.
  const bool tuned_for_gpu = tuning.gpu || env_get_or("VULKAN_TUNING", "") == "gpu";
  const std::string int_dot = env_get_or("VULKAN_INT_DOT", "");
  if (!int_dot.empty() && int_dot != "0" && int_dot != "1") {
    return invalid_argument("PADDOCK_VULKAN_INT_DOT=" + int_dot + ": expected 0 or 1");
  }
  if (!tuning.int_dot && !int_dot.empty()) tuning.int_dot = int_dot == "1";
  const VulkanDeviceInfo& info = ctx->info();
  DeviceTraits traits{.cpu = info.is_cpu && !tuned_for_gpu};
  if (tuning.int_dot.value_or(false) && !info.int_dot) {
    return invalid_argument("vulkan: " + info.name +
                            " has no integer dot products (asked for by PADDOCK_VULKAN_INT_DOT=1)");
  }
  traits.int_dot = !traits.cpu && info.int_dot && tuning.int_dot.value_or(info.int_dot_accelerated);
  auto be = std::make_unique<VulkanBackend>(std::move(ctx), traits);
  PADDOCK_TRY(be->init());
  return std::unique_ptr<Backend>(std::move(be));
}

}  // namespace paddock
