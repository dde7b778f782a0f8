// Structured output over real vocabularies (issue 7's acceptance): the fixture tokenizers'
// token texts, built into a GrammarVocab as the engine builds it, with random logits.
// - every bounded schema (and two held out of the unit tests) yields, for 100 seeds, a
//   complete value within 400 tokens that parses and validates;
// - under format "json", 200 tokens are always a valid JSON prefix and parse when complete.
// 100 seeds over stories260K's vocabulary (byte tokens); 1 over Llama 3's, whose 128256
// tokens make each step ~250x the work (bench/grammar_bench.cpp measures that vocabulary).
// Real vocabularies bring what a toy one lacks: byte tokens that split UTF-8 characters
// (and whose overlong combinations the matcher must refuse), multi-character tokens that
// cross JSON syntax ("\":", "},{"), long runs of spaces and control tokens.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "sample/json_schema.h"
#include "sample/test_json.h"
#include "tests/support/fixtures.h"
#include "tokenizer/tokenizer.h"

namespace paddock {
namespace {

using sample_test::Json;

// The engine's LoadedModel::grammar_vocab: pieces without control-token text, EOG ids.
std::shared_ptr<const sample::GrammarVocab> load_vocab(const std::string& rel) {
  auto f = gguf::File::open(testing::fixtures_dir() + "/" + rel);
  EXPECT_TRUE(f.ok()) << rel << ": " << f.status().to_string();
  if (!f.ok()) return nullptr;
  auto tok = Tokenizer::load(**f);
  EXPECT_TRUE(tok.ok()) << rel << ": " << tok.status().to_string();
  if (!tok.ok()) return nullptr;
  const int32_t n = (*tok)->n_vocab();
  std::vector<std::string> pieces(static_cast<size_t>(n));
  std::vector<int32_t> eog;
  for (int32_t id = 0; id < n; ++id) {
    pieces[static_cast<size_t>(id)] = (*tok)->piece(id, /*special=*/false);
    if ((*tok)->is_eog(id)) eog.push_back(id);
  }
  EXPECT_FALSE(eog.empty()) << rel;
  return std::make_shared<const sample::GrammarVocab>(std::move(pieces), eog);
}

// Not in the unit tests: nested arrays of objects, numbers with both bounds, enums of
// strings with non-ASCII text, optional properties and additionalProperties false.
const char* const kHeldOut[] = {
    R"({"type":"object","additionalProperties":false,"properties":{
        "rows":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{
          "id":{"type":"integer","minimum":1,"maximum":999},"w":{"type":"number","minimum":0,"maximum":1}},
          "required":["id","w"]}},
        "label":{"enum":["café","naïve","plain"]}},"required":["rows"]})",
    R"({"anyOf":[{"type":"array","items":{"type":"boolean"},"maxItems":5},
        {"type":"object","properties":{"s":{"type":"string","minLength":1,"maxLength":6}},"required":["s"]}]})",
};

struct VocabCase {
  const char* name;
  const char* path;
  int seeds;  // Llama 3's 128256 tokens cost ~2 ms a step: a few seeds keep the suite fast
};

class StructuredOutput : public ::testing::TestWithParam<VocabCase> {};

void check_schema(const std::shared_ptr<const sample::GrammarVocab>& vocab, const char* text, int seeds) {
  const Json schema = Json::parse(text);
  auto gbnf = sample::json_schema_to_gbnf(schema);
  ASSERT_TRUE(gbnf.ok()) << gbnf.status().to_string() << "\n" << text;
  for (int64_t seed = 0; seed < seeds; ++seed) {
    const sample_test::Walk w = sample_test::random_walk(*gbnf, vocab, seed, 400, nullptr);
    ASSERT_TRUE(w.ended) << "seed " << seed << " did not finish in 400 tokens: " << w.text << "\n" << text;
    const Json v = Json::parse(w.text, nullptr, false);
    ASSERT_FALSE(v.is_discarded()) << "seed " << seed << " does not parse: " << w.text;
    EXPECT_TRUE(sample_test::validate(v, schema, schema)) << "seed " << seed << " invalid: " << w.text << "\n"
                                                          << text;
  }
}

TEST_P(StructuredOutput, BoundedSchemasCompleteParseAndValidate) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto vocab = load_vocab(GetParam().path);
  ASSERT_NE(vocab, nullptr);
  for (const char* text : sample_test::kBoundedSchemas) check_schema(vocab, text, GetParam().seeds);
  for (const char* text : kHeldOut) check_schema(vocab, text, GetParam().seeds);
}

TEST_P(StructuredOutput, FormatJsonIsAlwaysAValidPrefix) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto vocab = load_vocab(GetParam().path);
  ASSERT_NE(vocab, nullptr);
  auto gbnf = sample::format_to_gbnf(R"("json")");
  ASSERT_TRUE(gbnf.ok());
  for (int64_t seed = 0; seed < GetParam().seeds; ++seed) {
    const sample_test::Walk w =
        sample_test::random_walk(*gbnf, vocab, seed, 200, [&](const std::string& prefix) {
          ASSERT_TRUE(sample_test::is_json_prefix(prefix)) << "seed " << seed << ": " << prefix;
        });
    if (w.ended) {
      const Json v = Json::parse(w.text, nullptr, false);
      EXPECT_TRUE(v.is_object()) << "seed " << seed << ": " << w.text;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StructuredOutput,
                         ::testing::Values(VocabCase{"llama3", "tokenizer/vocab-llama3.gguf", 1},
                                           VocabCase{"stories_spm", "models/stories260K.gguf", 100}),
                         [](const ::testing::TestParamInfo<VocabCase>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace paddock
