// The Vulkan backend's op table: for each op, the input types it runs, the shader variant a
// node needs, and how the node's parameters are written (shaders/common.glsl's layout) and
// how many workgroups it takes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/graph.h"
#include "base/status.h"

namespace paddock {

// A pass's parameter words: per node the five tensors' descriptions, the op's words, then
// its tables (positions, rope angles).
class ParamWriter {
 public:
  static constexpr uint32_t kTensorWords = 45;  // 5 tensors x (offset, ne[4], nb[4])
  static constexpr uint32_t kOpWords = 11;
  // The scratch binding's first words: counters, 0 between dispatches (a kernel that counts
  // sets its counters back); its other words are the pass's working memory.
  static constexpr uint32_t kScratchCounters = 1 << 14;

  // Starts n's block: its tensors, each at `starts[i]` bytes into its binding. Returns the
  // block's first word.
  uint32_t begin_node(const Node& n, const std::array<uint32_t, 5>& starts);
  void op(uint32_t i, uint32_t v) { words_[base_ + kTensorWords + i] = v; }
  void op(uint32_t i, float v);
  // Appends a table; returns its word offset from the node's block (what shaders pass to pw).
  uint32_t table(std::span<const uint32_t> values);
  uint32_t table(std::span<const int32_t> values);
  // A table appended earlier in this pass, found by key, else made with `make` and kept.
  uint32_t shared_table(const std::string& key, const std::function<std::vector<uint32_t>()>& make);

  // n counters of the scratch binding, for this node alone in its pass: the first one's word,
  // or nothing when the pass has used up kScratchCounters.
  std::optional<uint32_t> scratch_counters(uint32_t n);
  // n words of the scratch binding after the counters, for this node alone in its pass.
  uint32_t scratch_words(uint32_t n);
  // n words as scratch_words gives, first from words given back by release_scratch: the
  // caller orders their earlier users before the new ones (the Vulkan backend's hazards).
  uint32_t reused_scratch_words(uint32_t n);
  void release_scratch(uint32_t first, uint32_t n);

  const uint32_t* data() const { return words_.data(); }
  size_t bytes() const { return words_.size() * sizeof(uint32_t); }
  // The scratch binding's size the pass needs.
  size_t scratch_bytes() const { return (size_t{kScratchCounters} + scratch_used_) * sizeof(uint32_t); }

 private:
  std::vector<uint32_t> words_;
  std::vector<std::pair<std::string, uint32_t>> shared_;
  uint32_t base_ = 0;
  uint32_t counters_used_ = 0;
  uint32_t scratch_used_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> released_;  // (first word, count), in order, apart
};

// What kernels tune to: a CPU implementation (lavapipe) runs each workgroup's invocations as
// SIMD lanes of one thread, where barriers are costly and wide rows per invocation are not.
struct DeviceTraits {
  bool cpu = false;
  // Block-quantized products (decode's and prompts') take integer dot products.
  bool int_dot = false;
};

struct VulkanKernel {
  bool (*supports)(std::span<const DType> types);
  std::string (*shader)(const Node& n, const DeviceTraits& d);
  // Writes n's op words and tables; returns its workgroup count (kUnsupported for shapes
  // the shader cannot take).
  Result<uint32_t> (*encode)(const Node& n, const DeviceTraits& d, ParamWriter& w);
};

const VulkanKernel& vulkan_kernel(Op op);
// Whether a MUL_MAT node runs decode's product, mul_mat_vec.comp.
bool mat_vec_product(const Node& n, const DeviceTraits& d);
// Whether n (a MUL_MAT or MUL_MAT_ID, or a GLU fused with its products) runs mul_mat_vec.comp
// or mul_mm.comp with integer dot products. Its activations (src[1]) are then quantized
// first by activation_quantizer(n) into quantized_words(k) scratch words a column, whose
// first word goes in n's op word kQuantizedOpWord (shaders/idot.glsl OP_XQ).
bool int_dot_product(const Node& n, const DeviceTraits& d);
// Also where quantize_q8.comp and a norm with QUANT write their columns (shaders' OP_XQ);
// word 0 is mul_mm.comp ID's column tiles and a norm's epsilon.
constexpr uint32_t kQuantizedOpWord = 1;
// The shaders/quantize_q8.comp variant for n's weight type: its activations rounded as
// ggml's CPU rounds them for that type (its vec_dot_type: Q8_K for K-quants, Q8_1 for Q4_1
// and Q5_1, Q8_0 for the others).
std::string activation_quantizer(const Node& n);
inline uint32_t quantized_words(int64_t k) { return static_cast<uint32_t>(k / 4 + k / 16); }

}  // namespace paddock
