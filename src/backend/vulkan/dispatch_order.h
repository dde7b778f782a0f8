// A pass's dispatches as the Vulkan backend records them: what each reads and writes, and the
// order they are recorded in with a barrier only where one depends on another. Each barrier
// drains the GPU (microseconds), so dispatches that depend on none before them join the
// running wave: a layer's q, k and v products, and with the lookahead of DispatchOrder the
// later ones too (qwen3's k product while its q output is normed).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "backend/vulkan/pipelines.h"

namespace paddock {

// A tensor as a kernel binds it: the buffer, the binding's offset and range, and where the
// view starts inside the binding.
struct Bound {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
  uint32_t start = 0;
  size_t bytes = 0;  // the view's extent from offset + start
};

// Scratch words [first, end) a dispatch writes or reads for another (a kernel's own working
// memory within one dispatch is not listed).
using WordRange = std::pair<uint32_t, uint32_t>;

// One node as the pass records it (or a step before one: quantizing a product's activations).
struct Dispatch {
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t base = 0;  // word offset of its parameters
  uint32_t groups = 0;
  std::array<Bound, kKernelBindings - 1> bound{};  // dst, then the sources
  size_t sources = 0;
  bool writes_dst = true;
  WordRange scratch_out{}, scratch_in{};
  VkDescriptorSet set = VK_NULL_HANDLE;
};

// Bytes [lo, hi) of a device buffer; the scratch binding's words are spans of no buffer.
struct Span {
  VkBuffer buffer;
  VkDeviceSize lo, hi;
  bool operator==(const Span&) const = default;
  bool meets(const Span& o) const { return buffer == o.buffer && lo < o.hi && o.lo < hi; }
};
inline Span span(const Bound& b) { return {b.buffer, b.offset + b.start, b.offset + b.start + b.bytes}; }
inline Span scratch_span(WordRange w) {
  return {VK_NULL_HANDLE, VkDeviceSize{4} * w.first, VkDeviceSize{4} * w.second};
}

// The bytes a set of dispatches reads and writes. A dispatch conflicts with the set when it
// reads what they write or writes what they read or write: then it must not run beside them
// (nor, for a set it would be recorded before, overtake them).
class Hazards {
 public:
  bool conflicts(const Dispatch& d) const;
  void add(const Dispatch& d);
  void clear() {
    read_.clear();
    written_.clear();
  }

 private:
  std::vector<Span> read_, written_;
};

// Where a dispatch goes in the recording: the next dispatch to record, and whether a barrier
// goes before it.
struct Step {
  size_t dispatch;
  bool barrier_before;
};

// The recording order of a pass's dispatches, a step at a time (so that the host works it out
// while the device runs the parts already submitted). Dispatches keep their order until one
// must wait for a barrier; before that barrier, any of the next kLookahead that conflicts
// neither with the running wave nor with the dispatches it would overtake joins the wave.
class DispatchOrder {
 public:
  static constexpr size_t kLookahead = 8;
  explicit DispatchOrder(std::span<const Dispatch> dispatches)
      : dispatches_(dispatches), recorded_(dispatches.size(), false) {}
  // Every dispatch is returned once; call at most dispatches.size() times.
  Step next();

 private:
  void take(size_t i, bool barrier_before);
  std::span<const Dispatch> dispatches_;
  std::vector<bool> recorded_;
  size_t first_ = 0;  // no dispatch before it is left
  Hazards wave_;      // what the dispatches since the last barrier read and write
  Hazards passed_;    // what the dispatches a lookahead has passed over read and write
  std::deque<Step> ready_;
};

}  // namespace paddock
