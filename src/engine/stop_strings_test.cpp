#include "engine/stop_strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/completion.h"

namespace paddock::engine {
namespace {

TEST(StopMatcher, PassesTextThroughWithoutStops) {
  StopMatcher m({});
  EXPECT_EQ(m.push("hello "), "hello ");
  EXPECT_EQ(m.push("world"), "world");
  EXPECT_EQ(m.flush(), "");
  EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, StopSplitAcrossPushesIsHeldThenCut) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.push("abc E"), "abc ");
  EXPECT_EQ(m.held(), 1u);
  EXPECT_EQ(m.push("N"), "");
  EXPECT_EQ(m.push("D and more"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.push("later"), "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, FalseStartIsReleased) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.push("xE"), "x");
  EXPECT_EQ(m.push("Nx"), "ENx");
  EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, HeldTextIsReleasedAtTheEnd) {
  StopMatcher m({"never completes"});
  EXPECT_EQ(m.push("it is never"), "it is ");
  EXPECT_EQ(m.flush(), "never");
  EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, EarliestStopWinsAndTextBeforeItIsEmitted) {
  StopMatcher m({"cat", "a"});
  EXPECT_EQ(m.matched(), "");
  EXPECT_EQ(m.push("the cat"), "the ");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "cat");  // it starts before the "a" inside it
  StopMatcher later({"cat", "he"});
  later.push("the cat");
  EXPECT_EQ(later.matched(), "he");  // the earliest in the text, not the first listed
}

TEST(StopMatcher, StopInsideOnePushCutsThere) {
  StopMatcher m({"\n\n", "User:"});
  EXPECT_EQ(m.push("one\n\ntwo"), "one");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "\n\n");
}

TEST(StopMatcher, MultiByteStopKeepsCharactersWhole) {
  StopMatcher m({"ÿé"});
  EXPECT_EQ(m.push("aÿ"), "a");
  EXPECT_EQ(m.push("b"), "ÿb");
  EXPECT_EQ(m.push("ÿé"), "");
  EXPECT_TRUE(m.stopped());
}

TEST(StopMatcher, EmptyStopStringsAreIgnored) {
  StopMatcher m({""});
  EXPECT_EQ(m.push("abc"), "abc");
  EXPECT_FALSE(m.stopped());
}

TEST(FitPrompt, ShortPromptIsUnchanged) {
  const std::vector<int32_t> t = {1, 2, 3};
  EXPECT_EQ(fit_prompt(t, 8, 4), t);
}

TEST(FitPrompt, KeepsNumKeepThenTheTail) {
  const std::vector<int32_t> t = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(fit_prompt(t, 6, 2), (std::vector<int32_t>{1, 2, 7, 8, 9, 10}));
  EXPECT_EQ(fit_prompt(t, 6, 0), (std::vector<int32_t>{5, 6, 7, 8, 9, 10}));
  // num_keep is capped at n_ctx - 1 so at least one recent token stays; -1 keeps the most.
  EXPECT_EQ(fit_prompt(t, 4, 100), (std::vector<int32_t>{1, 2, 3, 10}));
  EXPECT_EQ(fit_prompt(t, 4, -1), (std::vector<int32_t>{1, 2, 3, 10}));
}

}  // namespace
}  // namespace paddock::engine
