// Streaming extraction of tool calls from model output, after Ollama's generic parser
// (tools/tools.go): text before the tool-call tag is content; after the tag, balanced JSON
// objects are read as calls ({"name", "arguments"|"parameters"} or {"<tool>": {...}}, also
// nested). Tags "{" and "[" (bare JSON, Llama 3 style) apply only when the output's first
// non-space byte is that bracket. Partial tags are held back, never shown then retracted;
// if no call materialises, finish() returns the held text as content.
//   ToolCallParser p(ToolCallParser::infer_tag(tmpl), {"get_weather"});
//   auto o = p.add(chunk); ... auto last = p.finish();
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/gotmpl.h"
#include "chat/message.h"

namespace paddock::chat {

// "call_" + 8 random [a-z0-9]: the id every parsed tool call gets.
std::string random_tool_call_id();

class ToolCallParser {
 public:
  struct Output {
    std::string content;
    std::vector<ToolCall> calls;
  };
  using IdGenerator = std::function<std::string()>;

  // `tool_names` empty = accept any name. `make_id` defaults to "call_" + 8 random [a-z0-9].
  ToolCallParser(std::string tag, std::vector<std::string> tool_names, IdGenerator make_id = {});
  Output add(std::string_view chunk);
  Output finish();

  // Ollama's tag inference: the first non-space text inside the first {{ if ...ToolCalls }},
  // cut at its first '{' and trimmed; "{" when there is none.
  static std::string infer_tag(const GoTemplate& tmpl);

 private:
  enum class State { kStart, kLookingForTag, kParsing, kContent };
  void scan(Output* out);
  bool accept(const nlohmann::ordered_json& obj, Output* out);

  std::string tag_;
  std::vector<std::string> names_;
  IdGenerator make_id_;
  State state_ = State::kStart;
  std::string buf_;  // unconsumed text (held tag prefix, or JSON being parsed)
  std::string raw_;  // everything since the tag, returned as content if no call is parsed
  int calls_ = 0;
  bool closed_ = false;  // "[" tag: the list has ended
};

}  // namespace paddock::chat
