#include "backend/vulkan/dispatch_order.h"

#include <algorithm>

namespace paddock {

namespace {

bool any_meets(const std::vector<Span>& spans, const Span& s) {
  return std::any_of(spans.begin(), spans.end(), [&](const Span& t) { return t.meets(s); });
}

}  // namespace

bool Hazards::conflicts(const Dispatch& d) const {
  if (d.writes_dst && (any_meets(written_, span(d.bound[0])) || any_meets(read_, span(d.bound[0]))))
    return true;
  const Span out = scratch_span(d.scratch_out);
  if (any_meets(written_, out) || any_meets(read_, out)) return true;
  if (any_meets(written_, scratch_span(d.scratch_in))) return true;
  for (size_t i = 1; i <= d.sources; ++i) {
    if (any_meets(written_, span(d.bound[i]))) return true;
  }
  return false;
}

void Hazards::add(const Dispatch& d) {
  if (d.writes_dst) written_.push_back(span(d.bound[0]));
  if (d.scratch_out.second > 0) written_.push_back(scratch_span(d.scratch_out));
  if (d.scratch_in.second > 0) read_.push_back(scratch_span(d.scratch_in));
  for (size_t i = 1; i <= d.sources; ++i) read_.push_back(span(d.bound[i]));
}

void DispatchOrder::take(size_t i, bool barrier_before) {
  if (barrier_before) wave_.clear();
  wave_.add(dispatches_[i]);
  recorded_[i] = true;
  ready_.push_back({i, barrier_before});
}

Step DispatchOrder::next() {
  if (ready_.empty()) {
    while (recorded_[first_]) ++first_;
    const Dispatch& d = dispatches_[first_];
    if (!wave_.conflicts(d)) {
      take(first_, false);
    } else {
      // d waits for a barrier: first, later dispatches that need nothing d and the others
      // passed over write, and write nothing they read or write, join the running wave.
      passed_.clear();
      passed_.add(d);
      size_t looked = 0;
      for (size_t j = first_ + 1; j < dispatches_.size() && looked < kLookahead; ++j) {
        if (recorded_[j]) continue;
        ++looked;
        const Dispatch& later = dispatches_[j];
        if (!wave_.conflicts(later) && !passed_.conflicts(later)) {
          take(j, false);
        } else {
          passed_.add(later);
        }
      }
      take(first_, true);
    }
  }
  const Step s = ready_.front();
  ready_.pop_front();
  return s;
}

}  // namespace paddock
