#include "chat/thinking_parser.h"

#include <algorithm>

namespace paddock::chat {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  return s;
}
std::string_view trim(std::string_view s) {
  s = ltrim(s);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// Length of the longest suffix of s that is a proper prefix of tag.
size_t partial_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

bool has_thinking_field(const Node& n) {
  if (n.kind == NodeKind::kField &&
      std::find(n.idents.begin(), n.idents.end(), "Thinking") != n.idents.end()) {
    return true;
  }
  if (n.kind == NodeKind::kVariable &&
      std::find(n.idents.begin(), n.idents.end(), "Thinking") != n.idents.end()) {
    return true;
  }
  for (const NodePtr& c : n.nodes)
    if (has_thinking_field(*c)) return true;
  return n.pipe && has_thinking_field(*n.pipe);
}

bool mentions_messages(const Node& n) {
  if (std::find(n.idents.begin(), n.idents.end(), "Messages") != n.idents.end()) return true;
  for (const NodePtr& c : n.nodes)
    if (mentions_messages(*c)) return true;
  return n.pipe && mentions_messages(*n.pipe);
}

// Finds a list (inside a range over .Messages) whose direct children print .Thinking.
const Node* find_thinking_list(const Node& n, bool in_messages_range) {
  if (n.kind == NodeKind::kList && in_messages_range) {
    for (const NodePtr& c : n.nodes)
      if (c->kind == NodeKind::kAction && has_thinking_field(*c->pipe)) return &n;
  }
  const bool range_here = n.kind == NodeKind::kRange && n.pipe && mentions_messages(*n.pipe);
  for (const NodePtr& c : n.nodes)
    if (const Node* r = find_thinking_list(*c, in_messages_range)) return r;
  for (const NodePtr* p : {&n.list, &n.else_list})
    if (*p)
      if (const Node* r = find_thinking_list(**p, in_messages_range || range_here)) return r;
  return nullptr;
}

}  // namespace

ThinkingParser::ThinkingParser(std::string opening, std::string closing)
    : opening_(std::move(opening)), closing_(std::move(closing)) {}

void ThinkingParser::start_in_thinking() { state_ = State::kEatingWhitespaceAfterOpen; }

ThinkingParser::Output ThinkingParser::add(std::string_view chunk) {
  Output out;
  acc_.append(chunk);
  while (true) {
    switch (state_) {
      case State::kLookingForOpening: {
        const std::string_view t = ltrim(acc_);
        if (t.substr(0, opening_.size()) == opening_) {
          acc_ = std::string(t.substr(opening_.size()));
          state_ = State::kEatingWhitespaceAfterOpen;
          continue;
        }
        if (std::string_view(opening_).substr(0, t.size()) == t) return out;  // maybe a partial tag
        state_ = State::kDone;
        continue;
      }
      case State::kEatingWhitespaceAfterOpen:
      case State::kEatingWhitespaceAfterClose: {
        const std::string_view t = ltrim(acc_);
        if (t.empty()) {
          acc_.clear();
          return out;
        }
        acc_ = std::string(t);
        state_ = state_ == State::kEatingWhitespaceAfterOpen ? State::kThinking : State::kDone;
        continue;
      }
      case State::kThinking: {
        const size_t pos = acc_.find(closing_);
        if (pos != std::string::npos) {
          out.thinking += acc_.substr(0, pos);
          acc_.erase(0, pos + closing_.size());
          state_ = State::kEatingWhitespaceAfterClose;
          continue;
        }
        const size_t hold = partial_suffix(acc_, closing_);
        out.thinking += acc_.substr(0, acc_.size() - hold);
        acc_.erase(0, acc_.size() - hold);
        return out;
      }
      case State::kDone:
        out.content += acc_;
        acc_.clear();
        return out;
    }
  }
}

ThinkingParser::Output ThinkingParser::finish() {
  Output out;
  if (state_ == State::kThinking) {
    out.thinking = std::move(acc_);
  } else if (state_ == State::kLookingForOpening || state_ == State::kDone) {
    out.content = std::move(acc_);
  }
  acc_.clear();
  return out;
}

std::pair<std::string, std::string> ThinkingParser::infer_tags(const GoTemplate& tmpl) {
  const Node* list = find_thinking_list(*tmpl.tree().root, false);
  if (!list) return {};
  std::string first, last;
  for (const NodePtr& c : list->nodes) {
    if (c->kind != NodeKind::kText) continue;
    if (first.empty()) first = std::string(trim(c->text));
    last = std::string(trim(c->text));
  }
  return {first, last};
}

}  // namespace paddock::chat
