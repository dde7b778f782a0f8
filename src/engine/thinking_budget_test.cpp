// Thinking budgets: the limiter's state machine on its own, then the engine on the qwen3
// fixture (random weights, so the prompt opens the thinking section itself): the first N
// tokens are the model's own, then the closing text is forced, counted and emitted.
#include "engine/thinking_budget.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/completion.h"
#include "engine/loaded_model.h"
#include "tests/support/fixtures.h"

namespace paddock::engine {
namespace {

ThinkingBudget budget(int64_t n, bool inside) {
  return ThinkingBudget{.max_tokens = n, .open = "<think>", .close = "</think>\n\n", .starts_inside = inside};
}

TEST(ThinkingLimiter, ForcesTheCloseAfterTheBudgetInsideThePromptsSection) {
  ThinkingLimiter t(budget(2, true), {7, 8});
  EXPECT_FALSE(t.forcing());
  t.observe("a", false);
  EXPECT_FALSE(t.forcing());
  t.observe("b", false);
  ASSERT_TRUE(t.forcing());
  EXPECT_EQ(t.next_forced(), 7);
  t.observe("</think>", true);
  ASSERT_TRUE(t.forcing());
  EXPECT_EQ(t.next_forced(), 8);
  t.observe("\n\n", true);
  for (int i = 0; i < 10; ++i) t.observe("x", false);
  EXPECT_FALSE(t.forcing());
}

TEST(ThinkingLimiter, CountsOnlyAfterTheModelOpensTheSectionSplitAcrossTokens) {
  ThinkingLimiter t(budget(1, false), {7});
  for (int i = 0; i < 5; ++i) t.observe("answer ", false);
  t.observe("<thi", false);
  t.observe("nk>", false);
  EXPECT_FALSE(t.forcing());
  t.observe("hm", false);
  ASSERT_TRUE(t.forcing());
  EXPECT_EQ(t.next_forced(), 7);
}

TEST(ThinkingLimiter, AModelThatClosesItselfIsNotForced) {
  ThinkingLimiter t(budget(3, true), {7});
  t.observe("a", false);
  t.observe("</thi", false);
  t.observe("nk>", false);
  for (int i = 0; i < 10; ++i) t.observe("x", false);
  EXPECT_FALSE(t.forcing());
}

TEST(ThinkingLimiter, BudgetZeroForcesAtOnceAndAnEmptyCloseForcesNothing) {
  ThinkingLimiter zero(budget(0, true), {7});
  ASSERT_TRUE(zero.forcing());
  EXPECT_EQ(zero.next_forced(), 7);

  ThinkingLimiter opened(budget(0, false), {7});
  opened.observe("<think>", false);
  EXPECT_TRUE(opened.forcing());

  ThinkingLimiter empty(budget(0, true), {});
  for (int i = 0; i < 3; ++i) empty.observe("x", false);
  EXPECT_FALSE(empty.forcing());
}

class ThinkingBudgetEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    PADDOCK_REQUIRE_FIXTURES();
    EngineOptions o;
    o.backend = BackendKind::kRef;
    o.num_ctx = 256;
    auto m = LoadedModel::load(testing::fixtures_dir() + "/models/tiny-qwen3-q4_k_m.gguf", o);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(m).value();
  }

  struct Out {
    std::string text;
    std::vector<int32_t> ids;
    CompletionStats stats;
  };

  // Greedy from a prompt that ends inside the thinking section (or not).
  Out run(int64_t num_predict, std::optional<ThinkingBudget> b, bool prompt_opens = true) {
    CompletionParams p;
    p.prompt = std::string("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n") +
               (prompt_opens ? "<think>\n" : "");
    p.sampling.temperature = 0;
    p.sampling.logprobs = true;
    p.num_predict = num_predict;
    p.thinking_budget = std::move(b);
    Out out;
    auto kv = model_->make_kv_cache();
    EXPECT_TRUE(kv.ok());
    auto st = complete(*model_, *kv, p, [&](const Piece& piece) {
      out.text += piece.text;
      for (const TokenInfo& t : piece.logprobs) out.ids.push_back(t.id);
      return true;
    });
    EXPECT_TRUE(st.ok()) << st.status().to_string();
    if (st.ok()) out.stats = *st;
    return out;
  }

  std::vector<int32_t> close_tokens() const {
    return model_->tokenizer().encode("</think>\n\n", false, true);
  }

  std::unique_ptr<LoadedModel> model_;
};

TEST_F(ThinkingBudgetEngine, AfterNThinkingTokensTheCloseTextIsForcedAndTheAnswerFollows) {
  constexpr int64_t kBudget = 6;
  const Out unlimited = run(kBudget, std::nullopt);
  ASSERT_EQ(unlimited.stats.done_reason, "length")
      << "the model ended before its budget: pick another prompt";
  ASSERT_EQ(unlimited.text.find("</think>"), std::string::npos);

  const std::vector<int32_t> close = close_tokens();
  ASSERT_FALSE(close.empty());
  const Out limited = run(40, budget(kBudget, true));
  ASSERT_GE(limited.ids.size(), kBudget + close.size());
  // The model's own first N tokens, then exactly the close text's tokens.
  EXPECT_EQ(std::vector<int32_t>(limited.ids.begin(), limited.ids.begin() + kBudget), unlimited.ids);
  EXPECT_EQ(std::vector<int32_t>(limited.ids.begin() + kBudget, limited.ids.begin() + kBudget + close.size()),
            close);
  EXPECT_EQ(limited.text.substr(0, unlimited.text.size() + 10), unlimited.text + "</think>\n\n");
  // Forced tokens count like sampled ones, and the answer goes on after them.
  EXPECT_GT(limited.stats.eval_count, static_cast<int64_t>(kBudget + close.size()));
}

TEST_F(ThinkingBudgetEngine, BudgetZeroClosesAtOnceAndNumPredictBoundsForcedTokens) {
  const Out zero = run(10, budget(0, true));
  EXPECT_EQ(zero.text.rfind("</think>\n\n", 0), 0u) << zero.text;

  const Out cut = run(4, budget(3, true));
  EXPECT_EQ(cut.stats.done_reason, "length");
  EXPECT_EQ(cut.stats.eval_count, 4);
  ASSERT_EQ(cut.ids.size(), 4u);
  EXPECT_EQ(cut.ids[3], close_tokens()[0]);
}

TEST_F(ThinkingBudgetEngine, NothingIsForcedOutsideTheThinkingSection) {
  const Out unlimited = run(12, std::nullopt, /*prompt_opens=*/false);
  const Out budgeted = run(12, budget(2, false), /*prompt_opens=*/false);
  ASSERT_EQ(unlimited.text.find("<think>"), std::string::npos);
  EXPECT_EQ(budgeted.ids, unlimited.ids);
  EXPECT_EQ(budgeted.text, unlimited.text);
}

}  // namespace
}  // namespace paddock::engine
