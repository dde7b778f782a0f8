// One completion through a Runner, with the model's output split into thinking, content and
// tool calls by the chat parsers, as Ollama's rendered mode does. Routes turn the events into
// NDJSON (native) or SSE (OpenAI) and stop the run by returning false from `emit`.
//   PADDOCK_TRY(run_generation(lease.runner(), spec, [&](const GenerationEvent& e) { ... }));
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "chat/message.h"
#include "runner/runner.h"

namespace paddock::server {

struct GenerationSpec {
  runner::CompletionRequest request;
  std::pair<std::string, std::string> think_tags;  // parse thinking when the opening tag is set
  bool prompt_opens_thinking = false;              // the prompt already ends with the opening tag
  bool harmony = false;  // split by the Harmony parser, which then stands for both parsers below
  bool parse_tools = false;
  std::string tool_tag = "{";
  std::vector<std::string> tool_names;
  int64_t dropped_tokens = 0;  // prompt tokens of whole messages dropped to fit the context
};

struct GenerationEvent {
  std::string content, thinking;
  std::vector<chat::ToolCall> tool_calls;
  std::vector<runner::TokenLogprob> logprobs;
  bool done = false;
  runner::CompletionChunk final;  // valid when done
};
using EmitFn = std::function<bool(const GenerationEvent&)>;

// Returns kCancelled when `emit` returned false or the request's is_cancelled fired.
Status run_generation(runner::Runner& runner, const GenerationSpec& spec, const EmitFn& emit);

}  // namespace paddock::server
