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

TEST(VulkanFusion, RopeAndTheCopyOfItsOutputIntoACache) {
  const std::vector<int32_t> pos = {5};
  const RopeParams rp{.n_dims = 64};
  for (DType cache : {DType::kF16, DType::kF32, DType::kQ8_0}) {
    Pass p;
    const TensorView k = p.g.rope(p.x.reshape({64, 4, 1}), pos, rp, std::nullopt, "Kcur");
    const TensorView cells = p.g.tensor(cache, {64, 4, 1});
    p.g.copy(k, cells, "k_cache");
    p.g.add(cells, cells, "read");  // the pass's result, so that the copy stays
    Node out;
    if (cache == DType::kQ8_0) {  // the rope writes floats only
      EXPECT_EQ(p.fused(0, out), 1u);
      continue;
    }
    ASSERT_EQ(p.fused(0, out), 2u) << dtype_name(cache);
    EXPECT_EQ(out.op, Op::kRope);
    EXPECT_EQ(out.dst.offset, cells.offset);
    EXPECT_EQ(out.dst.type, cache);
  }
  Pass read;  // the rope's output read again (q, which attention reads)
  const TensorView q = read.g.rope(read.x.reshape({64, 4, 1}), pos, rp, std::nullopt, "Qcur");
  read.g.copy(q, read.g.tensor(DType::kF16, {64, 4, 1}), "k_cache");
  read.g.add(q, q, "twice");
  Node out;
  EXPECT_EQ(read.fused(0, out), 1u);
}

TEST(VulkanFusion, TheIntegerDotProductThatReadsANormsOutput) {
  constexpr DeviceTraits kIntDot{.cpu = false, .int_dot = true};
  Pass p;
  const TensorView n = p.g.mul(p.g.rms_norm(p.x, 1e-5f, "norm"), p.g.tensor(DType::kF32, {256}), "attn_norm");
  p.g.mul_mat(p.weight(0), n, "q");
  ASSERT_TRUE(p.g.allocate(host_device()).is_ok());
  const std::span<const Node> nodes = p.g.nodes();
  EXPECT_EQ(int_dot_reader(nodes, 1, n, kIntDot), &nodes[2]);
  EXPECT_EQ(int_dot_reader(nodes, 1, n, kGpu), nullptr) << "float products read F32 activations";

  Pass far;  // read only past the lookahead, or after a node writes over the norm's output
  const TensorView m =
      far.g.mul(far.g.rms_norm(far.x, 1e-5f, "norm"), far.g.tensor(DType::kF32, {256}), "attn_norm");
  TensorView y = far.x;
  for (int i = 0; i < 4; ++i) y = far.g.add(y, far.x, "pad");
  far.g.mul_mat(far.weight(0), m, "q");
  ASSERT_TRUE(far.g.allocate(host_device()).is_ok());
  EXPECT_EQ(int_dot_reader(far.g.nodes(), 1, m, kIntDot), nullptr);

  Pass over;
  const TensorView o =
      over.g.mul(over.g.rms_norm(over.x, 1e-5f, "norm"), over.g.tensor(DType::kF32, {256}), "attn_norm");
  over.g.copy(over.x, o, "overwrite");
  over.g.mul_mat(over.weight(0), o, "q");
  ASSERT_TRUE(over.g.allocate(host_device()).is_ok());
  EXPECT_EQ(int_dot_reader(over.g.nodes(), 1, o, kIntDot), nullptr);
}

}  // namespace
}  // namespace paddock
