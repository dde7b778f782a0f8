#include "server/generation.h"

#include <optional>

#include "chat/harmony_parser.h"
#include "chat/thinking_parser.h"
#include "chat/tool_parser.h"

namespace paddock::server {

Status run_generation(runner::Runner& runner, const GenerationSpec& spec, const EmitFn& emit) {
  std::optional<chat::HarmonyParser> harmony;
  if (spec.harmony) harmony.emplace();
  std::optional<chat::ThinkingParser> thinking;
  if (!harmony && !spec.think_tags.first.empty()) {
    thinking.emplace(spec.think_tags.first, spec.think_tags.second);
    if (spec.prompt_opens_thinking) thinking->start_in_thinking();
  }
  std::optional<chat::ToolCallParser> tools;
  if (!harmony && spec.parse_tools) tools.emplace(spec.tool_tag, spec.tool_names);
  bool stopped = false;

  auto process = [&](std::string_view text, bool flush, GenerationEvent* e) {
    if (harmony) {
      chat::HarmonyParser::Output o = harmony->add(text);
      if (flush) {
        chat::HarmonyParser::Output rest = harmony->finish();
        o.thinking += rest.thinking;
        o.content += rest.content;
        for (auto& c : rest.calls) o.calls.push_back(std::move(c));
      }
      e->thinking = std::move(o.thinking);
      e->content = std::move(o.content);
      e->tool_calls = std::move(o.calls);
      return;
    }
    std::string content(text);
    if (thinking) {
      chat::ThinkingParser::Output o = thinking->add(text);
      if (flush) {
        chat::ThinkingParser::Output rest = thinking->finish();
        o.thinking += rest.thinking;
        o.content += rest.content;
      }
      e->thinking = std::move(o.thinking);
      content = std::move(o.content);
    }
    if (tools) {
      chat::ToolCallParser::Output o = tools->add(content);
      if (flush) {
        chat::ToolCallParser::Output rest = tools->finish();
        o.content += rest.content;
        for (auto& c : rest.calls) o.calls.push_back(std::move(c));
      }
      content = std::move(o.content);
      e->tool_calls = std::move(o.calls);
    }
    e->content = std::move(content);
  };

  const Status s = runner.complete(spec.request, [&](const runner::CompletionChunk& chunk) {
    GenerationEvent e;
    process(chunk.text, chunk.done, &e);
    e.logprobs = chunk.logprobs;
    e.done = chunk.done;
    if (chunk.done) e.final = chunk;
    const bool empty = e.content.empty() && e.thinking.empty() && e.tool_calls.empty() && e.logprobs.empty();
    if (!e.done && empty) return true;  // a held-back partial tag: nothing to show yet
    if (!emit(e)) {
      stopped = true;
      return false;
    }
    return true;
  });
  if (stopped) return error(Code::kCancelled, "request canceled");
  return s;
}

}  // namespace paddock::server
