// Encoders (the bert and nomic-bert fixtures): every token sees the whole input, an input is
// one pass from an empty cache, they make embeddings and no logits, and a truncated input
// keeps its [SEP]. (Their numbers against llama.cpp: the golden embedding tests.)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/embedding.h"
#include "engine/loaded_model.h"
#include "tests/support/fixtures.h"

namespace paddock::engine {
namespace {

std::unique_ptr<LoadedModel> load(const std::string& name, int64_t num_ctx = 0) {
  auto m = LoadedModel::load(testing::fixtures_dir() + "/models/" + name,
                             {.num_ctx = num_ctx, .num_batch = 8, .backend = BackendKind::kRef});
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : nullptr;
}

// Every token's final hidden state, from one pass into an empty cache.
std::vector<float> hidden(const LoadedModel& m, KvCache& kv, const std::vector<int32_t>& ids) {
  kv.clear();
  std::vector<int32_t> pos(ids.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
  const SeqInput in{.kv = &kv, .tokens = ids, .positions = pos, .outputs = Outputs::kAll};
  auto out = m.model().forward_batch(m.backend(), std::span(&in, 1), Head::kHidden);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? (*out)[0] : std::vector<float>();
}

class Encoder : public ::testing::TestWithParam<const char*> {};

TEST_P(Encoder, EveryTokenSeesTheWholeInput) {
  PADDOCK_REQUIRE_FIXTURES();
  auto m = load(GetParam());
  ASSERT_TRUE(m);
  auto kv = m->make_kv_cache();
  ASSERT_TRUE(kv.ok());
  const auto n_embd = static_cast<size_t>(m->model().hparams().n_embd);
  const std::vector<float> a = hidden(*m, *kv, {101, 2320, 2588, 102});
  const std::vector<float> b = hidden(*m, *kv, {101, 2320, 1037, 102});  // the third token differs
  ASSERT_EQ(a.size(), 4 * n_embd);
  ASSERT_EQ(b.size(), a.size());
  // The first token's state changes with a later token: attention is not causal.
  EXPECT_NE(std::vector<float>(a.begin(), a.begin() + static_cast<ptrdiff_t>(n_embd)),
            std::vector<float>(b.begin(), b.begin() + static_cast<ptrdiff_t>(n_embd)));
}

TEST_P(Encoder, OneInputIsOnePassAndNoLogits) {
  PADDOCK_REQUIRE_FIXTURES();
  auto m = load(GetParam());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->model().has_lm_head());
  // The requested batch (8) gives way: an input must fit one pass.
  EXPECT_EQ(m->n_batch(), m->n_ctx());
  auto kv = m->make_kv_cache();
  ASSERT_TRUE(kv.ok());
  const std::vector<int32_t> ids = {101, 2320, 102};
  const std::vector<int32_t> pos = {0, 1, 2};
  auto logits = m->model().forward(m->backend(), *kv, ids, pos, false);
  ASSERT_FALSE(logits.ok());
  EXPECT_NE(logits.status().message().find("makes embeddings only"), std::string::npos) << logits.status().message();
  ASSERT_FALSE(hidden(*m, *kv, ids).empty());
  const std::vector<int32_t> more = {2588};
  const std::vector<int32_t> more_pos = {3};
  const SeqInput in{.kv = &*kv, .tokens = more, .positions = more_pos, .outputs = Outputs::kAll};
  auto second = m->model().forward_batch(m->backend(), std::span(&in, 1), Head::kHidden);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in one pass"), std::string::npos) << second.status().message();
  // embed() clears the cache first, and pools to one vector.
  auto e = embed(*m, *kv, ids);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->size(), static_cast<size_t>(m->model().hparams().n_embd));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Encoder, ::testing::Values("tiny-bert-f16.gguf", "tiny-nomic-bert-f16.gguf"));

TEST(Encoder, TruncatedInputKeepsItsSeparator) {
  PADDOCK_REQUIRE_FIXTURES();
  auto m = load("tiny-bert-f16.gguf");
  ASSERT_TRUE(m);
  const Tokenizer& tok = m->tokenizer();
  const std::vector<int32_t> ids = tok.encode("one two three four five six", true, false);
  ASSERT_EQ(ids.front(), 101);
  ASSERT_EQ(ids.back(), 102);
  const std::vector<int32_t> cut = truncate_input(ids, 4, tok);
  EXPECT_EQ(cut, (std::vector<int32_t>{ids[0], ids[1], ids[2], 102}));
  EXPECT_EQ(truncate_input(ids, 100, tok), ids);
}

}  // namespace
}  // namespace paddock::engine
