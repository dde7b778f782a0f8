// Streaming split of Harmony output (gpt-oss's chat format) into thinking, content and tool
// calls, as Ollama's harmony parser does (harmony/harmonyparser.go). The prompt ends with
// "<|start|>assistant", so output begins inside a message header:
//   <|channel|>analysis<|message|>reasoning<|end|><|start|>assistant<|channel|>final<|message|>answer
//   <|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}
// A header's channel and recipient (`to=...`, before or after the channel) decide where the
// body goes: a recipient makes it a tool call (`functions.NAME` -> NAME), else `analysis` is
// thinking and every other channel is content. Text between messages is dropped, as Ollama
// does. Partial tags are held back; finish() ends the open message (<|return|> and <|call|>
// end generation, so they rarely reach the text).
//   HarmonyParser p; auto o = p.add(chunk); ... auto last = p.finish();
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/message.h"
#include "chat/tool_parser.h"

namespace paddock::chat {

class HarmonyParser {
 public:
  struct Output {
    std::string thinking;
    std::string content;
    std::vector<ToolCall> calls;
  };

  explicit HarmonyParser(ToolCallParser::IdGenerator make_id = {});
  Output add(std::string_view chunk);
  Output finish();

  // A template is Harmony when it writes Harmony's message framing.
  static bool is_harmony(std::string_view template_text);

 private:
  enum class State { kBetween, kHeader, kBody };
  enum class Target { kContent, kThinking, kTool };
  void scan(Output* out);
  void open_message(std::string_view header);
  void end_message(Output* out);
  void emit(std::string_view text, Output* out);

  ToolCallParser::IdGenerator make_id_;
  State state_ = State::kHeader;  // after the prompt's "<|start|>"
  std::string acc_ = "assistant";
  Target target_ = Target::kContent;
  std::string tool_name_;
  std::string tool_args_;
  int calls_ = 0;
};

}  // namespace paddock::chat
