#include "backend/vulkan/dispatch_order.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace paddock {
namespace {

// Bytes [lo, hi) of buffer `b` (a handle never dereferenced).
Bound bytes(uintptr_t b, size_t lo, size_t hi) {
  Bound r;
  r.buffer = reinterpret_cast<VkBuffer>(b);
  r.start = static_cast<uint32_t>(lo);
  r.bytes = hi - lo;
  return r;
}

// A dispatch writing `out` from `in` (each a 16-byte tensor of buffer 1, by index).
Dispatch node(size_t out, std::vector<size_t> in) {
  Dispatch d;
  d.bound[0] = bytes(1, 16 * out, 16 * out + 16);
  for (size_t i = 0; i < in.size(); ++i) d.bound[i + 1] = bytes(1, 16 * in[i], 16 * in[i] + 16);
  d.sources = in.size();
  return d;
}

// The recorded order: dispatches' indices, with a "|" for each barrier.
std::string recorded(const std::vector<Dispatch>& ds) {
  DispatchOrder order(ds);
  std::string s;
  for (size_t i = 0; i < ds.size(); ++i) {
    const Step step = order.next();
    if (step.barrier_before) s += "| ";
    s += std::to_string(step.dispatch) + " ";
  }
  s.pop_back();
  return s;
}

TEST(VulkanDispatchOrder, BarriersOnlyBeforeWhatDependsOnTheWave) {
  EXPECT_EQ(recorded({node(1, {0}), node(2, {0}), node(3, {0})}), "0 1 2");
  EXPECT_EQ(recorded({node(1, {0}), node(2, {1}), node(3, {2})}), "0 | 1 | 2");
  // A write over what the wave reads, and over what it writes, waits too.
  EXPECT_EQ(recorded({node(1, {0}), node(0, {2})}), "0 | 1");
  EXPECT_EQ(recorded({node(1, {0}), node(1, {2})}), "0 | 1");
}

TEST(VulkanDispatchOrder, LaterIndependentDispatchesJoinTheWave) {
  // qwen3's attention inputs as its graph orders them: q product, q norm, q rope, k product,
  // k norm, k rope, v product. The k and v products run beside the q product, the k norm
  // beside the q norm.
  const std::vector<Dispatch> layer = {node(1, {0}), node(2, {1}), node(3, {2}), node(4, {0}),
                                       node(5, {4}), node(6, {5}), node(7, {0})};
  EXPECT_EQ(recorded(layer), "0 3 6 | 1 4 | 2 5");
  // 2 runs beside 0; 3 reads what 2 writes, after the barrier 1 waits for.
  EXPECT_EQ(recorded({node(1, {0}), node(2, {1}), node(3, {5}), node(4, {3})}), "0 2 | 1 3");
}

TEST(VulkanDispatchOrder, NothingOvertakesWhatItDependsOn) {
  // 1 waits for 0. Passing it over: 2 reads what 1 writes, 3 writes what 0 reads (with 0 in
  // the wave), 4 writes what 1 writes. After the barrier, 3 joins 1's wave.
  EXPECT_EQ(recorded({node(1, {0}), node(2, {1}), node(3, {2}), node(0, {5}), node(2, {5})}),
            "0 | 1 3 | 2 | 4");
}

TEST(VulkanDispatchOrder, LooksOnlySoFarAhead) {
  std::vector<Dispatch> ds = {node(1, {0})};
  // Each waits for the one before; then one independent, but past the first lookahead.
  for (size_t i = 0; i <= DispatchOrder::kLookahead; ++i) ds.push_back(node(2, {1}));
  ds.push_back(node(3, {0}));
  std::string expected = "0 | 1 " + std::to_string(ds.size() - 1);
  for (size_t i = 2; i + 1 < ds.size(); ++i) expected += " | " + std::to_string(i);
  EXPECT_EQ(recorded(ds), expected);
}

TEST(VulkanDispatchOrder, ScratchWordsOrderQuantizedColumnsAndTheirReuse) {
  Dispatch quantize = node(1, {0});
  quantize.writes_dst = false;
  quantize.scratch_out = {100, 200};
  Dispatch product = node(2, {0});
  product.scratch_in = {100, 200};
  Dispatch requantize = node(3, {4});  // some of the same words, given to another column
  requantize.writes_dst = false;
  requantize.scratch_out = {150, 250};
  const Dispatch other = node(5, {0});
  EXPECT_EQ(recorded({quantize, product, requantize, other}), "0 3 | 1 | 2");
}

}  // namespace
}  // namespace paddock
