// The graph's compute-buffer plan, host buffers, and how a backend runs a recorded pass.
#include "backend/graph.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/host_exec.h"

namespace paddock {
namespace {

TEST(Graph, ReleasedTensorsAreReusedAndTheKeptOneSurvives) {
  Graph g;
  const TensorView input = g.tensor(DType::kF32, {16});  // 64 bytes
  const size_t mark = g.mark();
  const TensorView a = g.tensor(DType::kF32, {32});
  const TensorView kept = g.tensor(DType::kF32, {8});
  g.tensor(DType::kF32, {64});
  const size_t high = g.planned_bytes();
  EXPECT_EQ(high, 64u + 128 + 64 + 256);
  g.release_since(mark, kept);
  // The gap a and the last tensor left is reused first fit; the kept tensor is not.
  const TensorView b = g.tensor(DType::kF32, {32});
  EXPECT_EQ(b.offset, a.offset);
  const TensorView c = g.tensor(DType::kF32, {8});
  EXPECT_GT(c.offset, kept.offset);
  EXPECT_EQ(g.planned_bytes(), high);
  // A tensor before the mark stays whatever is kept.
  g.release_since(mark, TensorView{});
  EXPECT_NE(g.tensor(DType::kF32, {16}).offset, input.offset);
}

TEST(Graph, TensorsHaveMemoryOnlyAfterAllocate) {
  Graph g;
  const TensorView t = g.tensor(DType::kF32, {4});
  EXPECT_EQ(t.data, nullptr);
  ASSERT_TRUE(g.allocate(host_device()).is_ok());
  const float v[4] = {1, 2, 3, 4};
  t.buffer->set(t.offset, {reinterpret_cast<const uint8_t*>(v), sizeof v});
  float back[4] = {};
  t.buffer->get(t.offset, {reinterpret_cast<uint8_t*>(back), sizeof back});
  EXPECT_EQ(std::memcmp(v, back, sizeof v), 0);
  EXPECT_EQ(host_view(t).data, t.buffer->host() + t.offset);
}

TEST(HostBuffer, CopyFromMovesOverlappingRanges) {
  Result<std::unique_ptr<Buffer>> b = host_device().alloc(8);
  ASSERT_TRUE(b.ok());
  const uint8_t bytes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  (*b)->set(0, bytes);
  (*b)->copy_from(**b, 2, 0, 6);  // as a KV cache drops two cells
  uint8_t out[8] = {};
  (*b)->get(0, out);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 8), (std::vector<uint8_t>{2, 3, 4, 5, 6, 7, 6, 7}));
  (*b)->clear();
  (*b)->get(0, out);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 8), std::vector<uint8_t>(8, 0));
  EXPECT_GT(host_device().memory().total, 0u);
}

// A backend whose table runs add only: enough to see how run_host_graph treats nodes.
struct Ctx {
  std::vector<std::string> ran;
};
bool f32_only(std::span<const DType> t) { return !t.empty() && t[0] == DType::kF32; }
bool nothing(std::span<const DType>) { return false; }
void run_add(Ctx& c, const Node& n) {
  c.ran.push_back(n.name);
  for (int64_t i = 0; i < n.dst.ne[0]; ++i) n.dst.f32(i) = n.src[0].f32(i) + n.src[1].f32(i);
}
void not_run(Ctx&, const Node&) { FAIL() << "a kernel ran for a node the table does not support"; }
constexpr HostKernelTable<Ctx> kTable = {{
    {nothing, not_run},
    {nothing, not_run},
    {nothing, not_run},
    {nothing, not_run},
    {f32_only, run_add},
    {nothing, not_run},
    {nothing, not_run},
    {nothing, not_run},
    {nothing, not_run},
}};
static_assert(complete(kTable));

class AddOnly final : public Backend {
 public:
  std::string_view name() const override { return "add-only"; }
  Device& device() override { return host_device(); }
  bool supports(Op op, std::span<const DType> types) const override {
    return table_supports(kTable, op, types);
  }
  Status compute(const Graph& g, const std::function<void(const Node&)>& after) override {
    return run_host_graph(*this, ctx_, kTable, g, after);
  }
  Ctx ctx_;
};

TEST(HostGraph, RunsNodesInOrderAndRefusesUnsupportedOnesBeforeRunningAny) {
  std::vector<float> x = {1, 2, 3};
  const TensorView xv = TensorView::contiguous(x.data(), DType::kF32, {3});
  AddOnly be;
  {
    Graph g;
    const TensorView y = g.add(xv, xv, "y");
    const TensorView z = g.add(y, xv, "z");
    ASSERT_TRUE(g.allocate(be.device()).is_ok());
    std::vector<std::string> seen;
    ASSERT_TRUE(be.compute(g, [&](const Node& n) { seen.push_back(n.name); }).is_ok());
    EXPECT_EQ(seen, (std::vector<std::string>{"y", "z"}));
    std::vector<float> out(3);
    z.buffer->get(z.offset, {reinterpret_cast<uint8_t*>(out.data()), 12});
    EXPECT_EQ(out, (std::vector<float>{3, 6, 9}));
  }
  be.ctx_.ran.clear();
  Graph g;
  g.add(xv, xv, "first");
  g.rms_norm(xv, 1e-5f, "attn_norm-0");
  ASSERT_TRUE(g.allocate(be.device()).is_ok());
  const Status s = static_cast<Backend&>(be).compute(g);  // the default `after`
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_NE(s.message().find("attn_norm-0 (RMS_NORM of F32)"), std::string::npos) << s.message();
  EXPECT_TRUE(be.ctx_.ran.empty());
}

}  // namespace
}  // namespace paddock
