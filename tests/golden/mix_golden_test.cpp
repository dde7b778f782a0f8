// Each fixture model was quantized by llama-quantize; plan_mix must choose exactly the type
// llama.cpp chose for every tensor, given the file's general.file_type and shape metadata.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "quant/mix.h"
#include "tests/support/fixtures.h"

namespace paddock {
namespace {

class MixGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(MixGolden, TensorTypesAreLlamaQuantizes) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::string path = testing::fixtures_dir() + "/models/" + GetParam() + ".gguf";
  Result<std::unique_ptr<gguf::File>> opened = gguf::File::open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  const gguf::File& f = **opened;
  const std::optional<int64_t> ft_id = f.get_int("general.file_type");
  ASSERT_TRUE(ft_id.has_value());
  const std::optional<FileType> ft = file_type_from_id(static_cast<uint32_t>(*ft_id));
  ASSERT_TRUE(ft.has_value()) << "file type id " << *ft_id;
  const std::string arch(f.get_string("general.architecture").value_or(""));
  MixModel model;
  model.arch = arch;
  model.n_layer = static_cast<int>(f.get_int(arch + ".block_count").value_or(0));
  model.n_head = static_cast<int>(f.get_int(arch + ".attention.head_count").value_or(1));
  model.n_head_kv = static_cast<int>(f.get_int(arch + ".attention.head_count_kv").value_or(model.n_head));
  model.n_expert = static_cast<int>(f.get_int(arch + ".expert_count").value_or(0));
  ASSERT_GT(model.n_layer, 0);

  std::vector<MixTensor> tensors;
  for (const gguf::TensorInfo& t : f.tensors()) {
    tensors.push_back(
        {t.name, t.type, static_cast<int>(t.ne.size()), t.ne[0], t.ne.size() > 2 ? t.ne[2] : 1});
  }
  const std::vector<DType> planned = plan_mix(*ft, tensors, model);
  ASSERT_EQ(planned.size(), tensors.size());
  int quantized = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(dtype_name(planned[i]), dtype_name(tensors[i].type)) << GetParam() << ": " << tensors[i].name;
    if (mix_quantizes(tensors[i].name, tensors[i].n_dims)) {
      ++quantized;
    } else {
      EXPECT_EQ(tensors[i].type, DType::kF32) << tensors[i].name << " is not quantized, so stays F32";
    }
  }
  EXPECT_GT(quantized, 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MixGolden,
                         ::testing::Values("tiny-zoo-q4_k_m", "tiny-zoo-q3_k_m", "tiny-zoo-q5_k_m",
                                           "tiny-llama3-q4_k_m", "tiny-qwen2-q4_k_m", "tiny-qwen3-q4_k_m",
                                           "tiny-tolstoy-chat-q4_k_m", "tiny-zoo-q6_k", "tiny-zoo-q8_0",
                                           "tiny-zoo-q4_0", "tiny-zoo-f16", "tiny-zoo-q2_k", "tiny-zoo-q4_1",
                                           "tiny-zoo-q5_0", "tiny-zoo-q5_1", "tiny-zoo-bf16",
                                           "tiny-qwen3-q8_0", "tiny-mistral-q4_0", "tiny-gptoss-mxfp4"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace paddock
