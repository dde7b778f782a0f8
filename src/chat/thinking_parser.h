// Streaming separation of a model's thinking from its answer, as Ollama's generic tag
// parser does (thinking/parser.go): leading whitespace is skipped, an opening tag starts
// thinking, the closing tag ends it, whitespace after either tag is eaten; output that does
// not start with the opening tag is all content. Partial tags are held back, never shown
// and then retracted; finish() releases what is held.
//   ThinkingParser p("<think>", "</think>"); auto o = p.add(chunk); ... p.finish();
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "chat/gotmpl.h"

namespace paddock::chat {

class ThinkingParser {
 public:
  struct Output {
    std::string thinking;
    std::string content;
  };

  explicit ThinkingParser(std::string opening = "<think>", std::string closing = "</think>");
  // The rendered prompt already ends with the opening tag: start inside thinking.
  void start_in_thinking();
  Output add(std::string_view chunk);
  Output finish();

  // Ollama's InferTags: the first and last text of the list around {{ .Thinking }} inside
  // a range over .Messages, trimmed; {"", ""} when the template has none.
  static std::pair<std::string, std::string> infer_tags(const GoTemplate& tmpl);

 private:
  enum class State {
    kLookingForOpening,
    kEatingWhitespaceAfterOpen,
    kThinking,
    kEatingWhitespaceAfterClose,
    kDone
  };
  std::string opening_;
  std::string closing_;
  State state_ = State::kLookingForOpening;
  std::string acc_;
};

}  // namespace paddock::chat
