// Every fixtures/tokenizer/<vocab>.gguf.inp/.out pair whose GGUF ships beside it: our ids must
// equal llama.cpp's exactly (add_special=false, parse_special=false), and decoding them must
// give the input back where llama.cpp's detokenizer would (byte-level BPE). And every golden
// model file's prompts tokenise to its ids (add_special=true), Ollama-layout twins included.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "gguf/gguf.h"
#include "tests/support/fixtures.h"
#include "tokenizer/tokenizer.h"

namespace paddock {
namespace {

std::vector<std::string> split_entries(const std::string& s) {
  static const std::string kSep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    const size_t next = s.find(kSep, pos);
    if (next == std::string::npos) break;
    out.push_back(s.substr(pos, next - pos));
    pos = next + kSep.size();
  }
  return out;
}

std::vector<std::vector<int32_t>> parse_ids(const std::string& s) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream lines(s);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::vector<int32_t> ids;
    int32_t id = 0;
    while (in >> id) ids.push_back(id);
    out.push_back(std::move(ids));
  }
  return out;
}

std::vector<std::string> vocab_files() {
  std::vector<std::string> out;
  const std::filesystem::path dir = std::filesystem::path(testing::fixtures_dir()) / "tokenizer";
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.size() > 4 && p.ends_with(".inp") && std::filesystem::exists(p.substr(0, p.size() - 4))) {
      out.push_back(p.substr(0, p.size() - 4));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TokenizerGolden, EveryVocabularyWithItsGgufMatchesLlamaCpp) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::vector<std::string> files = vocab_files();
  ASSERT_GE(files.size(), 11u) << "expected the vocabulary GGUFs of fixtures/tokenizer";
  size_t checked = 0;
  for (const std::string& gguf_path : files) {
    SCOPED_TRACE(gguf_path);
    auto file = gguf::File::open(gguf_path);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto tok = Tokenizer::load(**file);
    ASSERT_TRUE(tok.ok()) << tok.status().to_string();
    auto inp = read_file(gguf_path + ".inp");
    auto out = read_file(gguf_path + ".out");
    ASSERT_TRUE(inp.ok() && out.ok());
    const std::vector<std::string> texts = split_entries(*inp);
    const std::vector<std::vector<int32_t>> expected = parse_ids(*out);
    ASSERT_EQ(texts.size(), expected.size());
    ASSERT_GE(texts.size(), 40u);
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::vector<int32_t> ids = (*tok)->encode(texts[i], false, false);
      EXPECT_EQ(ids, expected[i]) << "case " << i << ": '" << texts[i] << "'";
      if ((*tok)->model() == "gpt2") {
        EXPECT_EQ((*tok)->decode(ids), texts[i]) << "case " << i;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 11u * 40u);
}

// The golden ids were made by llama.cpp from each model's own file, or for an Ollama-layout
// twin (which llama.cpp may not load) from its llama.cpp-layout twin's: the same ids either way.
TEST(TokenizerGolden, EveryGoldenModelsPromptsTokeniseToItsIds) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::filesystem::path root(testing::fixtures_dir());
  size_t checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(root / "golden")) {
    const std::string name = e.path().filename().string();
    const size_t dot = name.find('.');
    if (!name.ends_with(".logits.jsonl") && !name.ends_with(".embed.jsonl")) continue;
    const std::filesystem::path gguf_path = root / "models" / (name.substr(0, dot) + ".gguf");
    if (!std::filesystem::exists(gguf_path)) continue;
    SCOPED_TRACE(gguf_path.string());
    auto file = gguf::File::open(gguf_path.string());
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto tok = Tokenizer::load(**file);
    ASSERT_TRUE(tok.ok()) << tok.status().to_string();
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const nlohmann::json j = nlohmann::json::parse(line);
      const std::string prompt = j.at("prompt").get<std::string>();
      EXPECT_EQ((*tok)->encode(prompt, /*add_special=*/true, /*parse_special=*/false),
                j.at("ids").get<std::vector<int32_t>>())
          << "'" << prompt << "'";
      ++checked;
    }
  }
  EXPECT_GE(checked, 100u);
}

}  // namespace
}  // namespace paddock
