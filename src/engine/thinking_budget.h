// Enforces a ThinkingBudget (completion.h) over one sequence's output: follows whether the
// output is inside the thinking section, counts the tokens generated there, and once the
// budget is spent hands out the closing text's tokens, which the sequence emits instead of
// sampling. Invariants: only the first thinking section is limited; tokens are forced only
// inside it and only until the close text is out; tags are matched in detokenized text, so
// a tag split across tokens is found.
//   ThinkingLimiter t(budget, close_tokens);
//   if (t.forcing()) id = t.next_forced(); ... t.observe(text_of_id, forced);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/completion.h"

namespace paddock::engine {

class ThinkingLimiter {
 public:
  // close_tokens: budget.close tokenized (control tokens parsed, no BOS).
  ThinkingLimiter(ThinkingBudget budget, std::vector<int32_t> close_tokens);

  // The next token must be forced rather than sampled.
  bool forcing() const { return next_ < forced_.size(); }
  int32_t next_forced() { return forced_[next_++]; }
  // A token was emitted: its detokenized text, and whether it was forced.
  void observe(std::string_view text, bool forced);

 private:
  enum class State { kBefore, kInside, kOver };
  void start_forcing();

  ThinkingBudget budget_;
  std::string close_tag_;  // budget_.close without its trailing whitespace: what a model writes
  std::vector<int32_t> close_tokens_;
  State state_ = State::kBefore;
  std::string tail_;  // recent text, enough to find a tag split across tokens
  int64_t thinking_tokens_ = 0;
  std::vector<int32_t> forced_;
  size_t next_ = 0;
};

}  // namespace paddock::engine
