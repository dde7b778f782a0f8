#include "backend/vulkan/kernels.h"

#include <gtest/gtest.h>

#include <vector>

namespace paddock {
namespace {

// ParamWriter's words for a node start at its block; op word i is kTensorWords + i in.
uint32_t op_word(const ParamWriter& w, uint32_t base, uint32_t i) {
  return w.data()[base + ParamWriter::kTensorWords + i];
}

TEST(VulkanParamWriter, ScratchCountersAndWordsAreEachNodesOwn) {
  ParamWriter w;
  EXPECT_EQ(w.scratch_bytes(), ParamWriter::kScratchCounters * sizeof(uint32_t));
  EXPECT_EQ(w.scratch_counters(32), 0u);
  EXPECT_EQ(w.scratch_counters(8), 32u);
  EXPECT_EQ(w.scratch_words(100), ParamWriter::kScratchCounters);
  EXPECT_EQ(w.scratch_words(4), ParamWriter::kScratchCounters + 100);
  EXPECT_EQ(w.scratch_bytes(), (ParamWriter::kScratchCounters + 104) * sizeof(uint32_t));
  EXPECT_EQ(w.scratch_counters(ParamWriter::kScratchCounters - 40), 40u);
  EXPECT_FALSE(w.scratch_counters(1).has_value());  // full: the kernel runs unsplit
}

TEST(VulkanParamWriter, ReleasedScratchWordsAreHandedOutAgain) {
  constexpr uint32_t kBase = ParamWriter::kScratchCounters;
  ParamWriter w;
  const uint32_t a = w.reused_scratch_words(100), b = w.reused_scratch_words(50),
                 c = w.reused_scratch_words(10);
  EXPECT_EQ(a, kBase);
  EXPECT_EQ(b, kBase + 100);
  EXPECT_EQ(c, kBase + 150);
  w.release_scratch(a, 100);
  EXPECT_EQ(w.reused_scratch_words(40), kBase);  // first fit, the rest kept
  EXPECT_EQ(w.reused_scratch_words(60), kBase + 40);
  w.release_scratch(b, 50);
  w.release_scratch(c, 10);                            // joins b's words: 60 at the top
  EXPECT_EQ(w.reused_scratch_words(80), kBase + 100);  // the top range grown by 20
  EXPECT_EQ(w.scratch_bytes(), (kBase + 180) * sizeof(uint32_t));
  EXPECT_EQ(w.scratch_words(5), kBase + 180);  // a node's own words never come from released ones
}

// An attention node over `cells` cells of 8 KV heads for 32 query heads x `tokens` tokens.
struct Attention {
  std::vector<int32_t> positions;
  Node n;
  Attention(int64_t tokens, int64_t cells) {
    for (int64_t t = 0; t < tokens; ++t) positions.push_back(static_cast<int32_t>(cells - tokens + t));
    n.op = Op::kAttention;
    n.n_src = 3;
    n.src[0].ne = {128, 32, tokens, 1};
    n.src[1].type = n.src[2].type = DType::kF16;
    n.src[1].ne = n.src[2].ne = {128, 8, cells, 1};
    n.dst.ne = {128, 32, tokens, 1};
    n.ids = positions;
    n.attn.causal = true;
  }
  // (workgroups, splits, first counter, first partial word)
  std::array<uint32_t, 4> encode(const DeviceTraits& d) const {
    ParamWriter w;
    const uint32_t base = w.begin_node(n, {});
    Result<uint32_t> groups = vulkan_kernel(Op::kAttention).encode(n, d, w);
    EXPECT_TRUE(groups.ok());
    return {groups.ok() ? groups.value() : 0, op_word(w, base, 8), op_word(w, base, 9), op_word(w, base, 10)};
  }
};

TEST(VulkanAttention, DecodeOnAGpuSplitsTheCellsAcrossWorkgroups) {
  const auto [groups, splits, counter, partial] = Attention(1, 4000).encode({.cpu = false});
  EXPECT_EQ(splits, 16u);  // 32 heads x 16 = 512 workgroups
  EXPECT_EQ(groups, 32u * 16u);
  EXPECT_EQ(counter, 0u);
  EXPECT_EQ(partial, ParamWriter::kScratchCounters);

  EXPECT_EQ(Attention(1, 100).encode({.cpu = false})[1], 2u);  // one split per 64-cell chunk at most
  EXPECT_EQ(Attention(1, 64).encode({.cpu = false})[1], 1u);   // one chunk: nothing to split
}

TEST(VulkanAttention, PromptsAndCpuDevicesRunUnsplit) {
  const auto [groups, splits, counter, partial] = Attention(512, 4000).encode({.cpu = false});
  EXPECT_EQ(splits, 1u);
  EXPECT_EQ(groups, 32u * 512u);
  EXPECT_EQ(Attention(1, 4000).encode({.cpu = true})[1], 1u);
}

// A product of 1024 rows of `type` weights (4096 values each) by `columns` activation
// columns: decode's product when columns is 1.
Node product(DType type, int64_t columns, Op op = Op::kMulMat) {
  Node n;
  n.op = op;
  n.n_src = 2;
  n.src[0].type = type;
  n.src[0].ne = {4096, 1024, 1, 1};
  n.src[1].ne = {4096, columns, 1, 1};
  n.src[1].nb = {4, 4096 * 4, 4096 * 4 * static_cast<size_t>(columns),
                 4096 * 4 * static_cast<size_t>(columns)};
  n.dst.ne = {1024, columns, 1, 1};
  return n;
}

TEST(VulkanIntDot, ProductsOfTheTypesWithLevelsTakeIt) {
  const DeviceTraits gpu{.cpu = false, .int_dot = true};
  for (DType t :
       {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kIQ4_NL, DType::kIQ4_XS,
        DType::kMXFP4, DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
    EXPECT_TRUE(int_dot_product(product(t, 1), gpu)) << dtype_name(t);
    EXPECT_EQ(vulkan_kernel(Op::kMulMat).shader(product(t, 1), gpu).rfind("mul_mat_vec_idot_", 0), 0u);
    for (int64_t columns : {2, 8}) {  // a few sequences' decode: rows
      EXPECT_TRUE(int_dot_product(product(t, columns), gpu)) << dtype_name(t);
      EXPECT_EQ(vulkan_kernel(Op::kMulMat).shader(product(t, columns), gpu).rfind("mul_mat_vec_idot_", 0),
                0u);
    }
    EXPECT_TRUE(int_dot_product(product(t, 9), gpu)) << dtype_name(t);  // a prompt: tiles
    EXPECT_EQ(vulkan_kernel(Op::kMulMat).shader(product(t, 9), gpu).rfind("mul_mm_idot_", 0), 0u);
  }
  Node glu = product(DType::kQ4_K, 1, Op::kSwiglu);  // fused with its gate and up products
  glu.n_src = 3;
  glu.src[2] = glu.src[0];
  EXPECT_TRUE(int_dot_product(glu, gpu));
  EXPECT_EQ(vulkan_kernel(Op::kSwiglu).shader(glu, gpu), "mul_mat_vec_idot_swiglu_q4_k");
  Node experts = product(DType::kQ6_K, 1, Op::kMulMatId);  // 8 experts, 2 slots of 1 token
  experts.n_src = 3;
  experts.src[0].ne[2] = 8;
  experts.dst.ne = {1024, 2, 1, 1};
  EXPECT_TRUE(int_dot_product(experts, gpu));
  EXPECT_EQ(vulkan_kernel(Op::kMulMatId).shader(experts, gpu), "mul_mat_vec_idot_id_q6_k");
  experts.dst.ne = {1024, 2, 64, 1};  // 64 tokens: grouped tiles
  EXPECT_EQ(vulkan_kernel(Op::kMulMatId).shader(experts, gpu), "mul_mm_idot_id_q6_k");
}

TEST(VulkanIntDot, OtherProductsKeepFloatActivations) {
  const DeviceTraits gpu{.cpu = false, .int_dot = true};
  EXPECT_FALSE(int_dot_product(product(DType::kQ4_K, 1), {.cpu = false, .int_dot = false}));
  EXPECT_FALSE(int_dot_product(product(DType::kQ4_K, 1), {.cpu = true, .int_dot = true}));
  EXPECT_EQ(vulkan_kernel(Op::kMulMat).shader(product(DType::kQ4_K, 4), {.cpu = false, .int_dot = false}),
            "mul_mat_q4_k");  // a few float columns: mul_mat.comp
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    EXPECT_FALSE(int_dot_product(product(t, 1), gpu)) << dtype_name(t);
  }
  Node strided = product(DType::kQ8_0, 1);  // activations a row apart (a transposed view)
  strided.src[1].nb[0] = 8;
  EXPECT_FALSE(int_dot_product(strided, gpu));
  EXPECT_EQ(vulkan_kernel(Op::kMulMat).shader(strided, gpu), "mul_mat_vec_q8_0");
}

TEST(VulkanIntDot, AQuantizedColumnIsItsBytesThenAScaleAndSumPer32) {
  EXPECT_EQ(quantized_words(4096), 4096u / 4 + 2 * 4096u / 32);
}

}  // namespace
}  // namespace paddock
