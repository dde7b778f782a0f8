#include "server/capabilities.h"

#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace paddock::server {
namespace {

using Caps = std::vector<std::string>;

// A model with only its GGUF (no TEMPLATE layer), as `paddock create` from a bare file makes.
struct GgufModel {
  store::ModelInfo info;
  Result<PromptTemplate> tmpl = internal_error("unset");
  std::unique_ptr<gguf::File> file;

  explicit GgufModel(const std::string& name) {
    info.model_path = paddock::testing::fixtures_dir() + "/models/" + name;
    tmpl = choose_template(std::nullopt, std::nullopt, info.model_path);
    if (auto f = gguf::File::open(info.model_path); f.ok()) file = std::move(f).value();
  }
  Caps caps() const { return model_capabilities(info, tmpl.ok() ? &*tmpl : nullptr, file.get()); }
};

TEST(Capabilities, JinjaTemplatesThatTakeToolsAndThinking) {
  PADDOCK_REQUIRE_FIXTURES();
  const GgufModel tolstoy("tiny-tolstoy-chat-q4_k_m.gguf");
  ASSERT_TRUE(tolstoy.tmpl.ok()) << tolstoy.tmpl.status().to_string();
  EXPECT_EQ(tolstoy.caps(), (Caps{"completion", "tools"}));
  // The template in use is the GGUF's own.
  EXPECT_EQ(tolstoy.tmpl->text, *tolstoy.file->get_string("tokenizer.chat_template"));

  const GgufModel qwen3("tiny-qwen3-q4_k_m.gguf");
  ASSERT_TRUE(qwen3.tmpl.ok()) << qwen3.tmpl.status().to_string();
  EXPECT_EQ(qwen3.caps(), (Caps{"completion", "tools", "thinking"}));

  // gpt-oss's Harmony template: thinking and tools come from its channels.
  const GgufModel gptoss("tiny-gptoss-mxfp4.gguf");
  ASSERT_TRUE(gptoss.tmpl.ok()) << gptoss.tmpl.status().to_string();
  EXPECT_TRUE(gptoss.tmpl->harmony);
  EXPECT_EQ(gptoss.caps(), (Caps{"completion", "tools", "thinking"}));
  EXPECT_FALSE(qwen3.tmpl->harmony);

  EXPECT_EQ(GgufModel("tiny-bert-f16.gguf").caps()[0], "embedding");
}

TEST(Capabilities, GoTemplatesAndStoredLists) {
  store::ModelInfo info;
  auto go = choose_template(std::nullopt, "{{ .Prompt }}{{ if .Suffix }}{{ .Suffix }}{{ end }}", "");
  ASSERT_TRUE(go.ok());
  EXPECT_EQ(model_capabilities(info, &*go, nullptr), (Caps{"completion", "insert"}));
  info.projector_paths = {"/p"};
  EXPECT_EQ(model_capabilities(info, nullptr, nullptr), (Caps{"completion", "vision"}));
  info.config.capabilities = {"completion", "tools"};
  EXPECT_EQ(model_capabilities(info, nullptr, nullptr), (Caps{"completion", "tools"}));
}

}  // namespace
}  // namespace paddock::server
