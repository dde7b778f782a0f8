#include "chat/harmony_parser.h"

#include <algorithm>
#include <utility>

#include "base/json_depth.h"

namespace paddock::chat {

namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kChannel = "<|channel|>";
// <|end|> ends a message; <|return|> and <|call|> end generation too, should they be shown.
constexpr std::string_view kEnds[] = {"<|end|>", "<|return|>", "<|call|>"};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The longest suffix of `s` that begins `tag` (a tag that may yet arrive whole).
size_t partial_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

// A header word runs to whitespace or the next tag ("commentary<|constrain|>json").
std::string_view word_at(std::string_view s, size_t pos) {
  size_t end = pos;
  while (end < s.size() && !is_space(s[end]) && s[end] != '<') ++end;
  return s.substr(pos, end - pos);
}

}  // namespace

HarmonyParser::HarmonyParser(ToolCallParser::IdGenerator make_id) : make_id_(std::move(make_id)) {
  if (!make_id_) make_id_ = random_tool_call_id;
}

bool HarmonyParser::is_harmony(std::string_view template_text) {
  return template_text.find(kStart) != std::string_view::npos &&
         template_text.find(kChannel) != std::string_view::npos &&
         template_text.find(kMessage) != std::string_view::npos;
}

void HarmonyParser::open_message(std::string_view header) {
  std::string_view channel;
  if (const size_t c = header.find(kChannel); c != std::string_view::npos)
    channel = word_at(header, c + kChannel.size());
  // The recipient may come before the channel ("assistant to=functions.f<|channel|>...") or after it.
  std::string_view recipient;
  for (size_t p = header.find("to="); p != std::string_view::npos; p = header.find("to=", p + 1)) {
    if (p == 0 || is_space(header[p - 1]) || header[p - 1] == '>') {
      recipient = word_at(header, p + 3);
      break;
    }
  }
  if (!recipient.empty()) {
    target_ = Target::kTool;
    tool_name_ = std::string(recipient.starts_with("functions.") ? recipient.substr(10) : recipient);
    tool_args_.clear();
  } else {
    target_ = channel == "analysis" ? Target::kThinking : Target::kContent;
  }
}

void HarmonyParser::emit(std::string_view text, Output* out) {
  switch (target_) {
    case Target::kContent: out->content += text; break;
    case Target::kThinking: out->thinking += text; break;
    case Target::kTool: tool_args_ += text; break;
  }
}

void HarmonyParser::end_message(Output* out) {
  if (target_ == Target::kTool) {
    std::string_view raw = tool_args_;
    while (!raw.empty() && is_space(raw.front())) raw.remove_prefix(1);
    nlohmann::ordered_json args = nlohmann::ordered_json::object();
    if (!raw.empty()) {
      args =
          json_too_deep(raw) ? nlohmann::ordered_json() : nlohmann::ordered_json::parse(raw, nullptr, false);
    }
    if (args.is_object()) {
      out->calls.push_back(
          ToolCall{.id = make_id_(), .index = calls_++, .name = tool_name_, .arguments = args});
    } else {
      // Ollama fails the request on arguments that are not a JSON object; the text is kept instead.
      out->content += tool_args_;
    }
    tool_args_.clear();
  }
  target_ = Target::kContent;
}

void HarmonyParser::scan(Output* out) {
  for (;;) {
    switch (state_) {
      case State::kBetween: {
        const size_t s = acc_.find(kStart);
        if (s == std::string::npos) {
          acc_.erase(0, acc_.size() - partial_suffix(acc_, kStart));  // text outside messages is dropped
          return;
        }
        acc_.erase(0, s + kStart.size());
        state_ = State::kHeader;
        break;
      }
      case State::kHeader: {
        const size_t m = acc_.find(kMessage);
        if (m == std::string::npos) return;
        open_message(std::string_view(acc_).substr(0, m));
        acc_.erase(0, m + kMessage.size());
        state_ = State::kBody;
        break;
      }
      case State::kBody: {
        size_t end = std::string::npos, tag_len = 0;
        for (const std::string_view tag : kEnds) {
          const size_t e = acc_.find(tag);
          if (e < end) {
            end = e;
            tag_len = tag.size();
          }
        }
        if (end == std::string::npos) {
          size_t held = 0;
          for (const std::string_view tag : kEnds) held = std::max(held, partial_suffix(acc_, tag));
          emit(std::string_view(acc_).substr(0, acc_.size() - held), out);
          acc_.erase(0, acc_.size() - held);
          return;
        }
        emit(std::string_view(acc_).substr(0, end), out);
        end_message(out);
        acc_.erase(0, end + tag_len);
        state_ = State::kBetween;
        break;
      }
    }
  }
}

HarmonyParser::Output HarmonyParser::add(std::string_view chunk) {
  Output out;
  acc_ += chunk;
  scan(&out);
  return out;
}

HarmonyParser::Output HarmonyParser::finish() {
  Output out;
  if (state_ == State::kBody) {
    emit(acc_, &out);
    end_message(&out);
  }
  acc_.clear();
  state_ = State::kBetween;
  return out;
}

}  // namespace paddock::chat
