#include "store/quantize_gguf.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/quant.h"
#include "quant/test_budgets.h"
#include "quant/test_data.h"

namespace paddock::store {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kEmbd = 256;
constexpr int64_t kFf = 512;
constexpr int64_t kVocab = 48;
constexpr int kLayers = 2;

// A small llama-shaped model with Gaussian weights, written with the given float type.
class QuantizeGgufTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "paddock-quantize-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_model(DType weights, float poison = 0) {
    gguf::Writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "quantize test");
    w.set_u32("general.file_type", weights == DType::kF32 ? 0 : weights == DType::kF16 ? 1 : 32);
    w.set_u32("llama.block_count", kLayers);
    w.set_u32("llama.embedding_length", kEmbd);
    w.set_u32("llama.feed_forward_length", kFf);
    w.set_u32("llama.attention.head_count", 4);
    w.set_u32("llama.attention.head_count_kv", 2);
    const std::vector<std::string> tokens = {"<s>", "a", "b"};
    w.set_array_str("tokenizer.ggml.tokens", tokens);
    uint32_t seed = 1;
    const auto add = [&](const std::string& name, std::vector<int64_t> ne, DType type) {
      int64_t n = 1;
      for (int64_t d : ne) n *= d;
      std::vector<float> x = quant_test::gaussian_row(static_cast<size_t>(n), seed++);
      if (poison != 0 && name == "blk.1.ffn_up.weight") x[static_cast<size_t>(kEmbd) * 3 + 5] = poison;
      const std::vector<uint8_t> bytes = quantize(type, x);
      ASSERT_TRUE(w.add_tensor(name, type, ne, bytes).is_ok()) << name;
      originals_[name] = std::move(x);
    };
    add("token_embd.weight", {kEmbd, kVocab}, weights);
    for (int i = 0; i < kLayers; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      add(p + "attn_norm.weight", {kEmbd}, DType::kF32);
      add(p + "attn_q.weight", {kEmbd, kEmbd}, weights);
      add(p + "attn_k.weight", {kEmbd, kEmbd / 2}, weights);
      add(p + "attn_v.weight", {kEmbd, kEmbd / 2}, weights);
      add(p + "attn_output.weight", {kEmbd, kEmbd}, weights);
      add(p + "ffn_norm.weight", {kEmbd}, DType::kF32);
      add(p + "ffn_gate.weight", {kEmbd, kFf}, weights);
      add(p + "ffn_up.weight", {kEmbd, kFf}, weights);
      add(p + "ffn_down.weight", {kFf, kEmbd}, weights);
    }
    add("blk.1.ffn_up_exps.weight", {kEmbd, kFf / 4, 2}, weights);  // 2 experts
    add("output_norm.weight", {kEmbd}, DType::kF32);
    add("output.weight", {kEmbd, kVocab}, weights);
    const std::string path = dir_ + "/src-" + std::string(dtype_name(weights)) + ".gguf";
    EXPECT_TRUE(w.write_file(path).is_ok());
    return path;
  }

  std::string dir_;
  std::map<std::string, std::vector<float>> originals_;
};

std::vector<DType> planned_types(const gguf::File& src, FileType ft) {
  std::vector<MixTensor> mix;
  for (const gguf::TensorInfo& t : src.tensors())
    mix.push_back({t.name, t.type, static_cast<int>(t.ne.size()), t.ne[0], t.ne.size() > 2 ? t.ne[2] : 1});
  MixModel m;
  m.n_layer = kLayers;
  m.n_head = 4;
  m.n_head_kv = 2;
  return plan_mix(ft, mix, m);
}

TEST_F(QuantizeGgufTest, EveryTensorGetsThePlannedTypeWithinItsErrorBudget) {
  const std::string src_path = write_model(DType::kF32);
  auto src = gguf::File::open(src_path);
  ASSERT_TRUE(src.ok());
  for (const char* type :
       {"q4_K_M", "Q5_K_M", "q3_k_m", "Q6_K", "q8_0", "Q4_0", "f16", "Q2_K", "Q4_K_S", "mxfp4_moe"}) {
    SCOPED_TRACE(type);
    const std::string dst = dir_ + "/out-" + type + ".gguf";
    ASSERT_TRUE(quantize_gguf(src_path, type, dst, nullptr).is_ok());
    auto out = gguf::File::open(dst);
    ASSERT_TRUE(out.ok()) << out.status().message();
    const FileType ft = parse_quantize_type(type).value();
    EXPECT_EQ((*out)->get_int("general.file_type"), static_cast<int64_t>(ft));
    EXPECT_EQ((*out)->get_int("general.quantization_version"), 2);
    const std::vector<DType> want = planned_types(**src, ft);
    ASSERT_EQ((*out)->tensors().size(), want.size());
    bool any_quantized = false;
    for (size_t i = 0; i < want.size(); ++i) {
      const gguf::TensorInfo* found = (*out)->find_tensor((*src)->tensors()[i].name);
      ASSERT_NE(found, nullptr) << (*src)->tensors()[i].name;
      const gguf::TensorInfo& t = *found;
      EXPECT_EQ(t.ne, (*src)->tensors()[i].ne);
      EXPECT_EQ(dtype_name(t.type), dtype_name(want[i])) << t.name;
      any_quantized |= t.type != DType::kF32;
      const std::vector<float>& x = originals_.at(std::string(t.name));
      const std::vector<float> y = dequantize(t.type, (*out)->tensor_data(t), static_cast<int64_t>(x.size()));
      const quant_test::Budget* budget = quant_test::budget_for(t.type);
      ASSERT_NE(budget, nullptr) << dtype_name(t.type);
      EXPECT_LE(quant_test::relative_rmse(x, y), budget->gaussian) << t.name << " " << dtype_name(t.type);
      // Bit-exact with the reference quantizer on the same floats.
      EXPECT_TRUE(std::ranges::equal((*out)->tensor_data(t), quantize(t.type, x))) << t.name;
    }
    EXPECT_TRUE(any_quantized);
  }
}

TEST_F(QuantizeGgufTest, CopiesMetadataInOrderAndKeepsAlignment) {
  const std::string src_path = write_model(DType::kF16);
  const std::string dst = dir_ + "/out.gguf";
  ASSERT_TRUE(quantize_gguf(src_path, "Q4_K_M", dst, nullptr).is_ok());
  auto src = gguf::File::open(src_path);
  auto out = gguf::File::open(dst);
  ASSERT_TRUE(src.ok() && out.ok());
  // Everything but general.file_type in its order, then the two keys llama-quantize sets.
  std::vector<std::string_view> want;
  for (const gguf::KeyValue& kv : (*src)->metadata())
    if (kv.key != "general.file_type") want.push_back(kv.key);
  want.push_back("general.quantization_version");
  want.push_back("general.file_type");
  std::vector<std::string_view> got;
  for (const gguf::KeyValue& kv : (*out)->metadata()) got.push_back(kv.key);
  EXPECT_EQ(got, want);
  EXPECT_EQ((*out)->get_string("general.name"), "quantize test");
  EXPECT_EQ((*out)->get_array("tokenizer.ggml.tokens")->items.size(), 3u);
  EXPECT_EQ((*out)->alignment(), (*src)->alignment());
  for (const gguf::TensorInfo& t : (*out)->tensors()) EXPECT_EQ(t.offset % (*out)->alignment(), 0u) << t.name;
  EXPECT_EQ(fs::file_size(dst) % (*out)->alignment(), 0u);
}

TEST_F(QuantizeGgufTest, ReportsOllamaProgressUpToTheSourceSize) {
  const std::string src_path = write_model(DType::kBF16);
  std::vector<CreateProgress> events;
  ASSERT_TRUE(quantize_gguf(src_path, "q8_0", dir_ + "/out.gguf", [&](const CreateProgress& p) {
                events.push_back(p);
              }).is_ok());
  ASSERT_GE(events.size(), 2u);
  uint64_t source_bytes = 0;
  auto src = gguf::File::open(src_path);
  for (const gguf::TensorInfo& t : (*src)->tensors()) source_bytes += t.n_bytes;
  uint64_t last = 0;
  for (const CreateProgress& p : events) {
    EXPECT_EQ(p.status, "quantizing BF16 model to Q8_0");
    EXPECT_FALSE(p.digest.empty());
    EXPECT_EQ(p.total, source_bytes);
    EXPECT_GE(p.completed, last);
    last = p.completed;
  }
  EXPECT_EQ(events.front().completed, 0u);
  EXPECT_EQ(events.back().completed, source_bytes);
}

TEST_F(QuantizeGgufTest, RefusesQuantizedSourcesWithOllamasMessage) {
  const std::string src_path = write_model(DType::kF32);
  const std::string q4 = dir_ + "/q4.gguf";
  ASSERT_TRUE(quantize_gguf(src_path, "Q4_0", q4, nullptr).is_ok());
  const Status s = quantize_gguf(q4, "Q8_0", dir_ + "/again.gguf", nullptr);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("quantization is only supported for F16, BF16 and F32 models"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(fs::exists(dir_ + "/again.gguf"));
}

TEST_F(QuantizeGgufTest, UnknownAndImatrixTypesAreRefusedNamingTheSupportedOnes) {
  for (const char* type : {"Q9_K", "IQ4_XS", "", "q4_k_x"}) {
    auto ft = parse_quantize_type(type);
    ASSERT_FALSE(ft.ok()) << type;
    EXPECT_NE(ft.status().message().find(std::string("unsupported quantization type ") + type +
                                         " - supported types are F32, F16, BF16, Q4_0"),
              std::string::npos)
        << ft.status().message();
  }
  EXPECT_NE(parse_quantize_type("iq4_xs").status().message().find("importance matrix"), std::string::npos);
  EXPECT_EQ(parse_quantize_type("q4_k").value(), FileType::kQ4_K_M);
  EXPECT_EQ(parse_quantize_type("Q5_K").value(), FileType::kQ5_K_M);
  EXPECT_EQ(parse_quantize_type("q4_k_s").value(), FileType::kQ4_K_S);
  const Status s = quantize_gguf(write_model(DType::kF32), "Q9_K", dir_ + "/x.gguf", nullptr);
  EXPECT_FALSE(s.is_ok());
  EXPECT_FALSE(fs::exists(dir_ + "/x.gguf"));
}

TEST_F(QuantizeGgufTest, NonFiniteWeightsAreAnErrorAndLeaveNoFile) {
  const std::string src_path = write_model(DType::kF32, std::numeric_limits<float>::quiet_NaN());
  const std::string dst = dir_ + "/nan.gguf";
  const Status s = quantize_gguf(src_path, "Q4_K_M", dst, nullptr);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("blk.1.ffn_up.weight: row 3 holds NaN"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dst));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".part"), std::string::npos);
}

TEST_F(QuantizeGgufTest, MissingOrCorruptSourceIsAnError) {
  EXPECT_FALSE(quantize_gguf(dir_ + "/absent.gguf", "Q8_0", dir_ + "/o.gguf", nullptr).is_ok());
  const std::string junk = dir_ + "/junk.gguf";
  std::FILE* f = std::fopen(junk.c_str(), "wb");
  std::fputs("GGUFjunk", f);
  std::fclose(f);
  EXPECT_FALSE(quantize_gguf(junk, "Q8_0", dir_ + "/o.gguf", nullptr).is_ok());
  EXPECT_FALSE(fs::exists(dir_ + "/o.gguf"));
}

}  // namespace
}  // namespace paddock::store
