#include "engine/thinking_budget.h"

#include <cctype>
#include <utility>

namespace paddock::engine {

ThinkingLimiter::ThinkingLimiter(ThinkingBudget budget, std::vector<int32_t> close_tokens)
    : budget_(std::move(budget)), close_tag_(budget_.close), close_tokens_(std::move(close_tokens)) {
  while (!close_tag_.empty() && std::isspace(static_cast<unsigned char>(close_tag_.back())))
    close_tag_.pop_back();
  if (budget_.starts_inside) {
    state_ = State::kInside;
    if (budget_.max_tokens <= 0) start_forcing();
  }
}

void ThinkingLimiter::start_forcing() {
  forced_ = close_tokens_;
  next_ = 0;
  // With nothing to force (an empty close text) there is nothing left to limit.
  if (forced_.empty()) state_ = State::kOver;
}

void ThinkingLimiter::observe(std::string_view text, bool forced) {
  if (state_ == State::kOver) return;
  if (forced && !forcing()) {
    state_ = State::kOver;  // the whole close text is out
    return;
  }
  tail_.append(text);
  const std::string& tag = state_ == State::kBefore ? budget_.open : close_tag_;
  const size_t at = tag.empty() ? std::string::npos : tail_.find(tag);
  if (at != std::string::npos && state_ == State::kInside) {
    state_ = State::kOver;  // the model closed the section itself
    return;
  }
  if (at != std::string::npos) {
    state_ = State::kInside;
    tail_.erase(0, at + tag.size());
    if (budget_.max_tokens <= 0) start_forcing();
    return;
  }
  // Keep only what may still start the tag being looked for.
  const size_t keep = tag.empty() ? 0 : tag.size() - 1;
  if (tail_.size() > keep) tail_.erase(0, tail_.size() - keep);
  if (state_ != State::kInside || forced) return;
  if (++thinking_tokens_ >= budget_.max_tokens) start_forcing();
}

}  // namespace paddock::engine
