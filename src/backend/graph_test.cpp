// The graph's compute-buffer plan, host buffers, how a backend runs a recorded pass, and
// placement: which layers a split backend runs where, and how many layers fit.
#include "backend/graph.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "backend/host_exec.h"
#include "backend/placement.h"
#include "backend/split_backend.h"

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

// Layers keep the same positions and ring cells in turn: equal tables share one copy (device
// backends upload it once per pass, keyed by its address); others get their own.
TEST(Graph, KeepsEqualTablesOnce) {
  Graph g;
  std::vector<int32_t> pos = {5, 6, 7};
  const std::vector<int32_t> cells = {4, -1, 5, 6, 7};
  const std::span<const int32_t> p1 = g.keep(pos);
  const std::span<const int32_t> c1 = g.keep(cells);
  const std::span<const int32_t> p2 = g.keep(pos);
  const std::span<const int32_t> c2 = g.keep(cells);
  EXPECT_EQ(p1.data(), p2.data());
  EXPECT_EQ(c1.data(), c2.data());
  EXPECT_NE(p1.data(), c1.data());
  EXPECT_NE(p1.data(), pos.data());  // a copy: the caller's vector may go
  pos[2] = 8;
  const std::span<const int32_t> p3 = g.keep(pos);
  EXPECT_NE(p3.data(), p1.data());
  EXPECT_EQ((std::vector<int32_t>(p1.begin(), p1.end())), (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ((std::vector<int32_t>(p3.begin(), p3.end())), (std::vector<int32_t>{5, 6, 8}));
  EXPECT_TRUE(g.keep({}).empty());
}

// Sequences of one attention node: they cover the tokens in order, each over cells inside k;
// the graph keeps one copy for the nodes of every layer; host kernels run them as one call
// per sequence on its sub-views.
TEST(Graph, AttentionOverSeveralSequences) {
  const std::vector<AttnSeq> seqs = {{0, 2, 0, 4}, {2, 3, 6, 4}};
  EXPECT_TRUE(attn_seqs_valid({}, 5, 10));
  EXPECT_TRUE(attn_seqs_valid(seqs, 5, 10));
  EXPECT_FALSE(attn_seqs_valid(seqs, 6, 10));  // a token left out
  EXPECT_FALSE(attn_seqs_valid(seqs, 5, 9));   // cells past k
  const std::vector<AttnSeq> gap = {{0, 2, 0, 4}, {3, 2, 6, 4}};
  EXPECT_FALSE(attn_seqs_valid(gap, 5, 10));

  Graph g;
  const TensorView q = g.tensor(DType::kF32, {8, 2, 5});
  const TensorView k = g.tensor(DType::kF32, {8, 1, 10});
  const TensorView v = g.tensor(DType::kF32, {4, 1, 10});
  const TensorView out = g.tensor(DType::kF32, {4, 2, 5});
  const std::vector<int32_t> pos = {2, 3, 1, 2, 3};
  const std::vector<int32_t> cells = {0, 1, 2, 3, -1, -1, 3, 0, 1, 2};
  for (int layer = 0; layer < 2; ++layer) {
    g.attention(q, k, v, pos, AttnParams{.cells = cells, .seqs = seqs}, std::nullopt, out, "__fattn__");
  }
  EXPECT_EQ(g.nodes()[0].attn.seqs.data(), g.nodes()[1].attn.seqs.data());
  EXPECT_NE(g.nodes()[0].attn.seqs.data(), seqs.data());

  const std::vector<AttnSeqViews> parts = attn_seq_views(q, k, v, pos, g.nodes()[0].attn, out);
  ASSERT_EQ(parts.size(), 2u);
  const AttnSeqViews& b = parts[1];
  EXPECT_EQ(b.q.offset, q.offset + 2 * q.nb[2]);
  EXPECT_EQ(b.q.ne[2], 3);
  EXPECT_EQ(b.dst.offset, out.offset + 2 * out.nb[2]);
  EXPECT_EQ(b.k.offset, k.offset + 6 * k.nb[2]);
  EXPECT_EQ(b.v.ne[2], 4);
  EXPECT_EQ((std::vector<int32_t>(b.pos.begin(), b.pos.end())), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ((std::vector<int32_t>(b.params.cells.begin(), b.params.cells.end())),
            (std::vector<int32_t>{3, 0, 1, 2}));
  EXPECT_TRUE(b.params.seqs.empty());
  EXPECT_EQ(attn_seq_views(q, k, v, pos, AttnParams{}, out).size(), 1u);  // no sequences: the call itself
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

// A backend whose table runs add only: enough to see how run_host_nodes treats nodes.
struct Ctx {
  int kernels = 0;
};
bool f32_only(std::span<const DType> t) { return !t.empty() && t[0] == DType::kF32; }
bool nothing(std::span<const DType>) { return false; }
void run_add(Ctx& c, const Node& n) {
  ++c.kernels;
  for (int64_t i = 0; i < n.dst.ne[0]; ++i) n.dst.f32(i) = n.src[0].f32(i) + n.src[1].f32(i);
}
void not_run(Ctx&, const Node&) { FAIL() << "a kernel ran for a node the table does not support"; }
// ADD alone: a table of `nothing` but for that one row, whatever ops exist.
constexpr HostKernelTable<Ctx> add_only_table() {
  HostKernelTable<Ctx> t{};
  for (HostKernel<Ctx>& k : t) k = {nothing, not_run};
  t[static_cast<size_t>(Op::kAdd)] = {f32_only, run_add};
  return t;
}
constexpr HostKernelTable<Ctx> kTable = add_only_table();
static_assert(complete(kTable));

class AddOnly final : public Backend {
 public:
  explicit AddOnly(std::string name = "add-only", bool can_add = true)
      : name_(std::move(name)), can_add_(can_add) {}
  std::string_view name() const override { return name_; }
  Device& device() override { return host_device(); }
  bool supports(Op op, std::span<const DType> types) const override {
    return can_add_ && table_supports(kTable, op, types);
  }
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                   std::span<const TensorView> results) override {
    PADDOCK_TRY(run_host_nodes(*this, ctx_, kTable, nodes, after));
    for (const Node& n : nodes) {
      ran.push_back(n.name);
      for (const TensorView& r : results) {
        if (r.buffer == n.dst.buffer && r.offset == n.dst.offset) handed.push_back(n.name);
      }
    }
    return Status::ok();
  }
  Ctx ctx_;
  std::vector<std::string> ran;     // names of the nodes this backend ran
  std::vector<std::string> handed;  // those of them it was told others read afterwards

 private:
  std::string name_;
  bool can_add_;
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
  be.ctx_.kernels = 0;
  Graph g;
  g.add(xv, xv, "first");
  g.rms_norm(xv, 1e-5f, "attn_norm-0");
  ASSERT_TRUE(g.allocate(be.device()).is_ok());
  const Status s = static_cast<Backend&>(be).compute(g);  // the default `after`
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_NE(s.message().find("attn_norm-0 (RMS_NORM of F32)"), std::string::npos) << s.message();
  EXPECT_EQ(be.ctx_.kernels, 0);
}

TEST(Placement, OffloadsTheLastLayersThenTheOutputAsLlamaCppDoes) {
  auto parts = [](const Placement& p) {
    std::vector<int> v;
    for (int64_t l = -1; l <= p.n_layer(); ++l) v.push_back(p.backend(l));
    return v;  // input, layers 0..3, output
  };
  EXPECT_EQ(parts(Placement(4)), (std::vector<int>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(parts(Placement::offload(4, 0, 0, 1)), (std::vector<int>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(parts(Placement::offload(4, 1, 0, 1)), (std::vector<int>{0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(parts(Placement::offload(4, 4, 0, 1)), (std::vector<int>{0, 1, 1, 1, 1, 0}));
  EXPECT_EQ(parts(Placement::offload(4, 5, 0, 1)), (std::vector<int>{0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(parts(Placement::offload(4, 99, 2, 7)), (std::vector<int>{2, 7, 7, 7, 7, 7}));
  // Parts beyond either end go with the input or the output.
  EXPECT_EQ(Placement::offload(4, 5, 0, 1).backend(-9), 0);
  EXPECT_EQ(Placement::offload(4, 5, 0, 1).backend(INT64_MAX), 1);
}

TEST(Placement, FitTakesLayersFromTheLastDownThenTheOutput) {
  FitRequest r{.layer_weights = {100, 200, 300}, .output_weights = 50, .kv_per_layer = 10, .compute = 40};
  r.free = 40;
  EXPECT_EQ(fit_offload(r), 0);  // the compute buffer alone fills it
  r.free = 40 + 310 + 209;
  EXPECT_EQ(fit_offload(r), 1);  // the last layer; the next needs 210
  r.free = 40 + 310 + 210;
  EXPECT_EQ(fit_offload(r), 2);
  r.free = 40 + 310 + 210 + 110 + 49;
  EXPECT_EQ(fit_offload(r), 3);  // every layer, the output does not fit
  r.free = 40 + 310 + 210 + 110 + 50;
  EXPECT_EQ(fit_offload(r), 4);
}

// Two backends over one pass: each runs the runs of nodes of its layers, in graph order, and
// the numbers cross between them through the pass's buffer.
TEST(SplitBackend, RunsEachLayerOnItsBackend) {
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(std::make_unique<AddOnly>("a"));
  bs.push_back(std::make_unique<AddOnly>("b"));
  AddOnly& a = static_cast<AddOnly&>(*bs[0]);
  AddOnly& b = static_cast<AddOnly&>(*bs[1]);
  Result<std::unique_ptr<Backend>> split = make_split_backend(std::move(bs), Placement::offload(3, 2, 0, 1));
  ASSERT_TRUE(split.ok()) << split.status().message();
  Backend& be = **split;
  EXPECT_EQ(be.name(), "a+b");
  EXPECT_EQ(&be.for_layer(-1), &a);
  EXPECT_EQ(&be.for_layer(0), &a);
  EXPECT_EQ(&be.for_layer(1), &b);
  EXPECT_EQ(&be.for_layer(3), &a);  // the output: 2 layers offloaded of 3

  std::vector<float> x = {1, 2, 3};
  const TensorView xv = TensorView::contiguous(x.data(), DType::kF32, {3});
  Graph g;
  TensorView h = g.add(xv, xv, "embd");
  for (int64_t il = 0; il < 3; ++il) {
    g.set_layer(il);
    h = g.add(h, xv, "l_out-" + std::to_string(il));
  }
  g.set_layer(3);
  h = g.add(h, h, "result_output");
  ASSERT_TRUE(g.allocate(be.device()).is_ok());
  std::vector<std::string> seen;
  ASSERT_TRUE(be.compute(g, [&](const Node& n) { seen.push_back(n.name); }).is_ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"embd", "l_out-0", "l_out-1", "l_out-2", "result_output"}));
  EXPECT_EQ(a.ran, (std::vector<std::string>{"embd", "l_out-0", "result_output"}));
  EXPECT_EQ(b.ran, (std::vector<std::string>{"l_out-1", "l_out-2"}));
  // Each run's outputs that a later run or the caller reads: embd is read within its run only.
  EXPECT_EQ(a.handed, (std::vector<std::string>{"l_out-0", "result_output"}));
  EXPECT_EQ(b.handed, (std::vector<std::string>{"l_out-2"}));
  std::vector<float> out(3);
  h.buffer->get(h.offset, {reinterpret_cast<uint8_t*>(out.data()), 12});
  EXPECT_EQ(out, (std::vector<float>{10, 20, 30}));  // (2x + 3x) * 2
}

// A later node that reads part of an output still has it handed over; one that reads the
// bytes right after it does not.
TEST(SplitBackend, HandsOverOutputsReadInPart) {
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(std::make_unique<AddOnly>("a"));
  bs.push_back(std::make_unique<AddOnly>("b"));
  AddOnly& a = static_cast<AddOnly&>(*bs[0]);
  Result<std::unique_ptr<Backend>> split = make_split_backend(std::move(bs), Placement::offload(2, 1, 0, 1));
  ASSERT_TRUE(split.ok()) << split.status().message();
  std::vector<float> x(16);
  std::iota(x.begin(), x.end(), 1.0f);
  const TensorView x16 = TensorView::contiguous(x.data(), DType::kF32, {16});
  const TensorView x3 = TensorView::contiguous(x.data(), DType::kF32, {3});
  Graph g;
  g.set_layer(0);
  const TensorView wide = g.add(x16, x16, "wide");  // 64 bytes, its last 3 values read below
  const TensorView next = g.add(x3, x3, "next");    // read by nobody after layer 0
  g.set_layer(1);
  TensorView tail = wide.shifted(13 * sizeof(float));
  tail.ne[0] = 3;
  const TensorView out = g.add(tail, x3, "tail");
  ASSERT_EQ(next.offset, wide.offset + 16 * sizeof(float));  // adjacent: a half-open range apart
  ASSERT_TRUE(g.allocate((*split)->device()).is_ok());
  ASSERT_TRUE((*split)->compute(g, nullptr).is_ok());
  EXPECT_EQ(a.handed, (std::vector<std::string>{"wide"}));
  std::vector<float> got(3);
  out.buffer->get(out.offset, {reinterpret_cast<uint8_t*>(got.data()), 12});
  EXPECT_EQ(got, (std::vector<float>{29, 32, 35}));  // 2 * (14, 15, 16) + (1, 2, 3)
}

TEST(SplitBackend, RefusesANodeItsLayersBackendLacksBeforeRunningAny) {
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(std::make_unique<AddOnly>("a"));
  bs.push_back(std::make_unique<AddOnly>("none", /*can_add=*/false));
  AddOnly& a = static_cast<AddOnly&>(*bs[0]);
  Result<std::unique_ptr<Backend>> split = make_split_backend(std::move(bs), Placement::offload(2, 1, 0, 1));
  ASSERT_TRUE(split.ok());
  std::vector<float> x = {1};
  const TensorView xv = TensorView::contiguous(x.data(), DType::kF32, {1});
  Graph g;
  g.set_layer(0);
  g.add(xv, xv, "l_out-0");
  g.set_layer(1);
  g.add(xv, xv, "l_out-1");
  ASSERT_TRUE(g.allocate((*split)->device()).is_ok());
  const Status s = (*split)->compute(g);
  EXPECT_EQ(s.message(), "backend none cannot run node l_out-1 (ADD of F32)");
  EXPECT_TRUE(a.ran.empty());
  EXPECT_FALSE((*split)->supports(Op::kAdd, std::array{DType::kF32, DType::kF32}));
}

TEST(SplitBackend, RejectsAnEmptyListAndPartsOnMissingBackends) {
  EXPECT_EQ(make_split_backend({}, Placement(2)).status().code(), Code::kInvalidArgument);
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(std::make_unique<AddOnly>());
  EXPECT_EQ(make_split_backend(std::move(bs), Placement::offload(2, 1, 0, 1)).status().message(),
            "split backend: layer 1 placed on backend 1 of 1");
}

}  // namespace
}  // namespace paddock
