// Stop strings over streamed text: text that could still become a stop string is held back,
// a completed stop string ends the stream, and neither it nor anything after it is emitted.
// Invariants: input is whole UTF-8 characters (from the StreamingDetokenizer), and so is every
// piece returned; held-back text is always a proper prefix of some stop string.
//   StopMatcher m(stops); out += m.push(piece); if (m.stopped()) ...; out += m.flush();
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paddock::engine {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  // Appends text and returns what can safely be emitted now. After a stop string completes,
  // returns the text before it and stopped() turns true; later pushes return "".
  std::string push(std::string_view text);
  // The end of the stream without a stop: releases the held-back text.
  std::string flush();
  bool stopped() const { return stopped_; }
  // The stop string that completed (the earliest in the text; the first listed at a tie); "" before.
  const std::string& matched() const { return matched_; }
  // Bytes currently held back (a possible start of a stop string).
  size_t held() const { return held_.size(); }

 private:
  std::vector<std::string> stops_;  // empty strings removed
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace paddock::engine
