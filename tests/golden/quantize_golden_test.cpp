// store::quantize_gguf against llama-quantize: the tiny-zoo fixtures are one random model
// quantized by llama-quantize from tiny-zoo-f32 into every type. Quantizing tiny-zoo-f32
// ourselves must give every tensor the type, offset and bytes llama.cpp gave it (the
// reference row quantizers are llama.cpp's *_ref functions, which llama-quantize uses
// without an importance matrix).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "gguf/gguf.h"
#include "store/quantize_gguf.h"
#include "tests/support/fixtures.h"

namespace paddock {
namespace {

namespace fs = std::filesystem;

struct Case {
  const char* fixture;  // tiny-zoo-<fixture>.gguf, written by llama-quantize
  const char* type;     // what we ask for
};

class QuantizeGolden : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "paddock-quantize-golden-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_P(QuantizeGolden, MatchesLlamaQuantize) {
  PADDOCK_REQUIRE_FIXTURES();
  const Case c = GetParam();
  const std::string models = testing::fixtures_dir() + "/models/";
  const std::string out_path = dir_ + "/out.gguf";
  const Status s = store::quantize_gguf(models + "tiny-zoo-f32.gguf", c.type, out_path, nullptr);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  auto ours = gguf::File::open(out_path);
  auto theirs = gguf::File::open(models + "tiny-zoo-" + c.fixture + ".gguf");
  ASSERT_TRUE(ours.ok() && theirs.ok());
  EXPECT_EQ((*ours)->get_int("general.file_type"), (*theirs)->get_int("general.file_type"));
  ASSERT_EQ((*ours)->tensors().size(), (*theirs)->tensors().size());
  for (size_t i = 0; i < (*ours)->tensors().size(); ++i) {
    const gguf::TensorInfo& a = (*ours)->tensors()[i];
    const gguf::TensorInfo& b = (*theirs)->tensors()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(dtype_name(a.type), dtype_name(b.type)) << a.name;
    EXPECT_EQ(a.ne, b.ne) << a.name;
    EXPECT_EQ(a.offset, b.offset) << a.name;
    EXPECT_TRUE(std::ranges::equal((*ours)->tensor_data(a), (*theirs)->tensor_data(b))) << a.name;
  }
  EXPECT_TRUE(std::ranges::equal((*ours)->bytes(), (*theirs)->bytes())) << "the whole file";
}

// stories260K's feed-forward rows hold 172 values: the K-quant mixes fall back per tensor
// as llama.cpp does, and a legacy type whose block does not divide them is refused, as
// llama-quantize refuses it ("Unsupported tensor size encountered").
TEST(QuantizeStories, RowsNoBlockDividesFallBackOrAreRefused) {
  PADDOCK_REQUIRE_FIXTURES();
  std::string tmpl = (fs::temp_directory_path() / "paddock-quantize-stories-XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  const std::string src = testing::fixtures_dir() + "/models/stories260K.gguf";
  const Status refused = store::quantize_gguf(src, "q8_0", dir + "/q8.gguf", nullptr);
  EXPECT_NE(refused.message().find(
                "blk.0.ffn_down.weight: rows of 172 values are not a multiple of Q8_0's block of 32"),
            std::string::npos)
      << refused.to_string();
  EXPECT_FALSE(fs::exists(dir + "/q8.gguf"));
  ASSERT_TRUE(store::quantize_gguf(src, "Q4_K_M", dir + "/q4.gguf", nullptr).is_ok());
  auto out = gguf::File::open(dir + "/q4.gguf");
  ASSERT_TRUE(out.ok());
  for (const gguf::TensorInfo& t : (*out)->tensors()) {
    EXPECT_EQ(t.ne[0] % dtype_info(t.type).block_size, 0) << t.name;
    // 172 % 32 != 0: no fallback block fits, so llama.cpp keeps these in F16.
    if (t.ne[0] == 172) {
      EXPECT_EQ(dtype_name(t.type), "F16") << t.name;
    }
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Zoo, QuantizeGolden,
                         ::testing::Values(Case{"q4_k_m", "q4_K_M"}, Case{"q3_k_m", "Q3_K_M"},
                                           Case{"q5_k_m", "q5_k_m"}, Case{"q6_k", "Q6_K"},
                                           Case{"q8_0", "q8_0"}, Case{"q4_0", "Q4_0"}, Case{"q4_1", "Q4_1"},
                                           Case{"q5_0", "Q5_0"}, Case{"q5_1", "Q5_1"}, Case{"q2_k", "Q2_K"},
                                           Case{"f16", "F16"}, Case{"bf16", "BF16"}),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.fixture);
                         });

}  // namespace
}  // namespace paddock
