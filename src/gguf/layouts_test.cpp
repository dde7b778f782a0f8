// The layout table (layouts.h): each Ollama fixture, translated, has its llama.cpp twin's
// keys and tensor names; a file no row matches, and any file opened as stored, is unchanged.
#include "gguf/layouts.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "tests/support/fixtures.h"

namespace paddock::gguf {
namespace {

std::unique_ptr<File> open_model(const std::string& name, Layout layout = Layout::kLlamaCpp) {
  auto f = File::open(testing::fixtures_dir() + "/models/" + name, layout);
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? std::move(f).value() : nullptr;
}

std::set<std::string> keys(const File& f) {
  std::set<std::string> out;
  for (const KeyValue& kv : f.metadata()) out.emplace(kv.key);
  return out;
}

std::set<std::string> tensor_names(const File& f) {
  std::set<std::string> out;
  for (const TensorInfo& t : f.tensors()) out.emplace(t.name);
  return out;
}

// Every key of `want` has the same value in `got` (arrays: the same type; the tokenizer's
// lengths are checked where they must agree).
void expect_same_values(const File& got, const File& want) {
  for (const KeyValue& kv : want.metadata()) {
    const Value* v = got.find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key;
    if (kv.value.type == ValueType::kString) {
      EXPECT_EQ(v->s, kv.value.s) << kv.key;
    } else if (kv.value.type == ValueType::kArray) {
      EXPECT_EQ(v->elem_type, kv.value.elem_type) << kv.key;
    } else {
      EXPECT_EQ(v->as_f64(), kv.value.as_f64()) << kv.key;
    }
  }
}

std::unique_ptr<File> parse_written(const Writer& w, std::vector<uint8_t>& bytes) {
  auto written = w.write_buffer();
  EXPECT_TRUE(written.ok());
  bytes = std::move(written).value();
  auto f = File::parse(bytes);
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? std::move(f).value() : nullptr;
}

TEST(Layouts, OllamaGemma3HasItsTwinsKeysAndKeepsTheVisionTower) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto ollama = open_model("tiny-gemma3-ollama-q4_k_m.gguf");
  const auto twin = open_model("tiny-gemma3-q4_k_m.gguf");
  ASSERT_TRUE(ollama && twin);
  EXPECT_EQ(ollama->translated_from(), "ollama-gemma3");
  EXPECT_EQ(twin->translated_from(), "");
  std::set<std::string> want = keys(*twin);
  want.emplace("gemma3.mm.tokens_per_image");
  EXPECT_EQ(keys(*ollama), want);
  expect_same_values(*ollama, *twin);  // rope bases 1e6 / 10000, rms epsilon 1e-6
  // The vision tower stays for a later reader; the tokenizer keeps its image tokens.
  for (const char* t : {"v.patch_embd.weight", "mm.input_projection.weight"}) {
    EXPECT_NE(ollama->find_tensor(t), nullptr) << t;
  }
  EXPECT_EQ(ollama->get_array("tokenizer.ggml.tokens")->items.size(), 515u);
}

TEST(Layouts, AsStoredKeepsOllamasKeys) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto f = open_model("tiny-gemma3-ollama-q4_k_m.gguf", Layout::kAsStored);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->translated_from(), "");
  EXPECT_EQ(f->get_float("gemma3.rope.global.freq_base"), 1e6);
  EXPECT_EQ(f->find("gemma3.rope.freq_base"), nullptr);
  EXPECT_EQ(f->find("gemma3.attention.layer_norm_rms_epsilon"), nullptr);
  const auto g = open_model("tiny-gptoss-ollama-mxfp4.gguf", Layout::kAsStored);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->get_string("general.architecture"), "gptoss");
  EXPECT_NE(g->find_tensor("blk.0.attn_out.weight"), nullptr);
}

// Ollama's multimodal gemma3 files name no rope base at all: Ollama's defaults are written.
TEST(Layouts, OllamaGemma3WithoutRopeKeysGetsOllamasDefaults) {
  Writer w;
  w.set_string("general.architecture", "gemma3");
  w.set_u32("gemma3.mm.tokens_per_image", 256);
  std::vector<uint8_t> bytes;
  const auto f = parse_written(w, bytes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->translated_from(), "ollama-gemma3");
  EXPECT_EQ(f->get_float("gemma3.rope.freq_base"), 1e6);
  EXPECT_EQ(f->find("gemma3.rope.freq_base_swa"), nullptr);  // the model's default, 10000
  EXPECT_EQ(f->get_float("gemma3.attention.layer_norm_rms_epsilon"), static_cast<double>(1e-6f));
}

// A global base beside llama.cpp's key wins, as Ollama reads it.
TEST(Layouts, OllamaGemma3GlobalBaseReplacesRopeFreqBase) {
  Writer w;
  w.set_string("general.architecture", "gemma3");
  w.set_f32("gemma3.rope.freq_base", 10000.0f);
  w.set_f32("gemma3.rope.global.freq_base", 5e5f);
  w.set_f32("gemma3.attention.layer_norm_rms_epsilon", 1e-5f);
  std::vector<uint8_t> bytes;
  const auto f = parse_written(w, bytes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->get_float("gemma3.rope.freq_base"), 5e5);
  EXPECT_EQ(f->find("gemma3.rope.global.freq_base"), nullptr);
  EXPECT_EQ(f->get_float("gemma3.attention.layer_norm_rms_epsilon"), static_cast<double>(1e-5f));
  EXPECT_EQ(f->metadata().size(), 3u);
}

TEST(Layouts, LlamaCppGemma3MatchesNoRow) {
  Writer w;
  w.set_string("general.architecture", "gemma3");
  w.set_f32("gemma3.rope.freq_base", 1e6f);
  std::vector<uint8_t> bytes;
  const auto f = parse_written(w, bytes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->translated_from(), "");
  EXPECT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(f->find("gemma3.attention.layer_norm_rms_epsilon"), nullptr);
}

TEST(Layouts, OllamaGptOssHasItsTwinsKeysAndTensors) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto ollama = open_model("tiny-gptoss-ollama-mxfp4.gguf");
  const auto twin = open_model("tiny-gptoss-mxfp4.gguf");
  ASSERT_TRUE(ollama && twin);
  EXPECT_EQ(ollama->translated_from(), "ollama-gptoss");
  EXPECT_EQ(keys(*ollama), keys(*twin));
  expect_same_values(*ollama, *twin);  // expert_feed_forward_length 256, rope.scaling.type yarn
  EXPECT_EQ(ollama->get_array("tokenizer.ggml.tokens")->items.size(), 512u);
  EXPECT_EQ(tensor_names(*ollama), tensor_names(*twin));
  for (const char* t :
       {"blk.0.attn_output.weight", "blk.0.attn_sinks.weight", "blk.0.post_attention_norm.weight"}) {
    EXPECT_NE(ollama->find_tensor(t), nullptr) << t;
  }
  EXPECT_EQ(ollama->get_string("tokenizer.ggml.pre"), "default");  // an SPM vocabulary: no pre-tokenizer
}

// A byte-level BPE vocabulary marked "default" gets gpt-oss's own pre-tokenizer; the expert
// FFN length comes from the experts' shape.
TEST(Layouts, OllamaGptOssGetsGpt4oAndExpertLength) {
  Writer w;
  w.set_string("general.architecture", "gptoss");
  w.set_u32("gptoss.block_count", 1);
  w.set_string("tokenizer.ggml.model", "gpt2");
  const std::vector<uint8_t> gate(4 * 3 * 2 * sizeof(float));
  ASSERT_TRUE(w.add_tensor("blk.0.ffn_gate_exps.weight", DType::kF32, {4, 3, 2}, gate).is_ok());
  const std::vector<uint8_t> sinks(2 * sizeof(float));
  ASSERT_TRUE(w.add_tensor("blk.0.attn_sinks", DType::kF32, {2}, sinks).is_ok());
  std::vector<uint8_t> bytes;
  const auto f = parse_written(w, bytes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->get_string("general.architecture"), "gpt-oss");
  EXPECT_EQ(f->get_int("gpt-oss.block_count"), 1);
  EXPECT_EQ(f->find("gptoss.block_count"), nullptr);
  EXPECT_EQ(f->get_int("gpt-oss.expert_feed_forward_length"), 3);
  EXPECT_EQ(f->get_string("gpt-oss.rope.scaling.type"), "yarn");
  EXPECT_EQ(f->get_string("tokenizer.ggml.pre"), "gpt-4o");
  EXPECT_NE(f->find_tensor("blk.0.attn_sinks.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("blk.0.attn_sinks"), nullptr);
}

TEST(Layouts, OllamaGptOssWithoutExpertsIsAnError) {
  Writer w;
  w.set_string("general.architecture", "gptoss");
  auto bytes = w.write_buffer();
  ASSERT_TRUE(bytes.ok());
  const auto f = File::parse(*bytes);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("ollama-gptoss"), std::string::npos) << f.status().message();
}

TEST(Layouts, OllamaLlama3GetsLlamaBpe) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto ollama = open_model("tiny-tolstoy-chat-ollama-q4_k_m.gguf");
  const auto stored = open_model("tiny-tolstoy-chat-ollama-q4_k_m.gguf", Layout::kAsStored);
  const auto twin = open_model("tiny-tolstoy-chat-q4_k_m.gguf");
  ASSERT_TRUE(ollama && stored && twin);
  EXPECT_EQ(ollama->translated_from(), "ollama-llama3");
  EXPECT_EQ(ollama->get_string("tokenizer.ggml.pre"), "llama-bpe");
  EXPECT_EQ(stored->find("tokenizer.ggml.pre"), nullptr);
  EXPECT_EQ(twin->translated_from(), "");
}

TEST(Layouts, UnmatchedFileIsUnchanged) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto f = open_model("tiny-qwen3-q4_k_m.gguf");
  const auto stored = open_model("tiny-qwen3-q4_k_m.gguf", Layout::kAsStored);
  ASSERT_TRUE(f && stored);
  EXPECT_EQ(f->translated_from(), "");
  EXPECT_EQ(keys(*f), keys(*stored));
  expect_same_values(*f, *stored);
  EXPECT_EQ(tensor_names(*f), tensor_names(*stored));
}

}  // namespace
}  // namespace paddock::gguf
