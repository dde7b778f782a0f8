#include "backend/vulkan/fusion.h"

#include <gtest/gtest.h>

#include <vector>

#include "backend/buffer.h"

namespace paddock {
namespace {

constexpr DeviceTraits kGpu{.cpu = false};

// A pass's nodes on host memory: weights [256, rows] of Q4_K, a column x [256].
struct Pass {
  Graph g;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(4 * 144 * 64);
  TensorView weight(int i) const {
    return TensorView::weight(bytes.data() + static_cast<size_t>(i) * 144 * 64, DType::kQ4_K, {256, 64});
  }
  TensorView x = g.tensor(DType::kF32, {256, 1});
  size_t fused(size_t i, Node& out, std::vector<TensorView> results = {}, DeviceTraits traits = kGpu) {
    EXPECT_TRUE(g.allocate(host_device()).is_ok());
    if (results.empty()) results.push_back(g.nodes().back().dst);
    return fused_nodes(g.nodes(), i, results, traits, out);
  }
};

TEST(VulkanFusion, NormAndItsWeightRow) {
  Pass p;
  const TensorView w = p.g.tensor(DType::kF32, {256});
  p.g.mul(p.g.rms_norm(p.x, 1e-5f, "norm"), w, "attn_norm");
  Node out;
  ASSERT_EQ(p.fused(0, out), 2u);
  EXPECT_EQ(out.op, Op::kRmsNorm);
  EXPECT_EQ(out.n_src, 2);
  EXPECT_EQ(out.src[1].offset, w.offset);

  Pass again;  // the norm's output read by a later node: kept apart
  const TensorView n = again.g.rms_norm(again.x, 1e-5f, "norm");
  again.g.add(again.g.mul(n, again.g.tensor(DType::kF32, {256}), "attn_norm"), n, "sum");
  EXPECT_EQ(again.fused(0, out), 1u);
}

TEST(VulkanFusion, DecodeProductAndTheAddAfterIt) {
  Pass p;
  const TensorView r = p.g.tensor(DType::kF32, {64, 1});
  const TensorView o = p.g.mul_mat(p.weight(0), p.x, "o");
  p.g.add(r, o, "ffn_inp");
  Node out;
  ASSERT_EQ(p.fused(0, out), 2u);
  EXPECT_EQ(out.op, Op::kMulMat);
  EXPECT_EQ(out.n_src, 3);
  EXPECT_EQ(out.src[2].offset, r.offset);
  EXPECT_EQ(out.dst.offset, p.g.nodes()[1].dst.offset);
  EXPECT_EQ(p.fused(0, out, {}, DeviceTraits{.cpu = true}), 1u) << "CPU devices take mul_mat.comp";

  Pass read;  // the product read again, or returned to the caller
  const TensorView y = read.g.mul_mat(read.weight(0), read.x, "o");
  const TensorView r2 = read.g.tensor(DType::kF32, {64, 1});
  const TensorView sum = read.g.add(r2, y, "ffn_inp");
  read.g.add(sum, y, "twice");
  EXPECT_EQ(read.fused(0, out), 1u);
  EXPECT_EQ(read.fused(0, out, {y, sum}), 1u);

  Pass prompt;  // two columns: a prompt's product, not decode's
  const TensorView x2 = prompt.g.tensor(DType::kF32, {256, 2});
  const TensorView o2 = prompt.g.mul_mat(prompt.weight(0), x2, "o");
  prompt.g.add(prompt.g.tensor(DType::kF32, {64, 2}), o2, "ffn_inp");
  EXPECT_EQ(prompt.fused(0, out), 1u);
}

TEST(VulkanFusion, GateAndUpProductsAndTheirGlu) {
  for (bool gate_first : {true, false}) {
    Pass p;
    TensorView gate, up;
    if (gate_first) gate = p.g.mul_mat(p.weight(0), p.x, "gate");
    up = p.g.mul_mat(p.weight(1), p.x, "up");
    if (!gate_first) gate = p.g.mul_mat(p.weight(0), p.x, "gate");
    p.g.swiglu(gate, up, "ffn_swiglu");
    Node out;
    ASSERT_EQ(p.fused(0, out), 3u);
    EXPECT_EQ(out.op, Op::kSwiglu);
    EXPECT_EQ(out.n_src, 3);
    EXPECT_EQ(out.src[0].data, p.weight(0).data) << "src[0]: the gate weights";
    EXPECT_EQ(out.src[2].data, p.weight(1).data) << "src[2]: the up weights";
  }
  Node out;

  Pass other;  // the products of two different inputs
  const TensorView x2 = other.g.tensor(DType::kF32, {256, 1});
  const TensorView gate = other.g.mul_mat(other.weight(0), other.x, "gate");
  other.g.swiglu(gate, other.g.mul_mat(other.weight(1), x2, "up"), "ffn_swiglu");
  EXPECT_EQ(other.fused(0, out), 1u);

  Pass read;  // the up product read again
  const TensorView up = read.g.mul_mat(read.weight(1), read.x, "up");
  const TensorView h =
      read.g.geglu(read.g.mul_mat(read.weight(0), read.x, "gate"), up, "ffn_geglu");  // up first
  read.g.add(h, up, "sum");
  EXPECT_EQ(read.fused(0, out), 1u);
}

}  // namespace
}  // namespace paddock
