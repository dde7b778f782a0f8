// Ollama's chat prompt rendering with a Go template (server/prompt.go + template.Execute):
// messages are collated (consecutive same-role messages joined with "\n\n", except tool
// messages); a template that uses .Messages gets {System, Messages, Tools, Response="",
// Think, ThinkLevel, IsThinkSet}; any other template runs once per completed
// (System, Prompt, Response) turn and, for the last turn, is cut right after .Response.
//   PADDOCK_ASSIGN(std::string prompt, render_chat(tmpl, messages, tools, {}));
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "chat/gotmpl.h"
#include "chat/message.h"
#include "chat/value.h"

namespace paddock::chat {

struct RenderOptions {
  bool think = false;         // .Think
  bool is_think_set = false;  // .IsThinkSet: the request set `think` explicitly
  std::string think_level;    // .ThinkLevel: "low" | "medium" | "high" | "max" | ""
  std::string date;           // "YYYY-MM-DD" for currentDate; empty = today
  // Ollama's prompt.go: each image becomes "[img-N]" (N counts images across messages),
  // replacing a literal "[img]" in the content or else prefixed to it.
  bool image_tags = true;
  ExecLimits limits;
};

// Ollama's fallback when a model carries no template at all.
inline constexpr const char* kDefaultGoTemplate = "{{ if .System }}{{ .System }}\n\n{{ end }}{{ .Prompt }}";

Result<std::string> render_chat(const GoTemplate& tmpl, const std::vector<Message>& messages,
                                const std::vector<Tool>& tools, const RenderOptions& options);

// Ollama's fill-in-the-middle mode (generate with prompt and suffix): the template gets
// {Prompt, Suffix, Response="", Think, ThinkLevel, IsThinkSet}.
Result<std::string> render_fim(const GoTemplate& tmpl, const std::string& prompt, const std::string& suffix,
                               const RenderOptions& options);

// The same from text: template source, a JSON array of messages, and a JSON array of
// tools (empty string = no tools). This is what `paddock template render --gotmpl` calls.
Result<std::string> render_chat_json(std::string_view template_text, std::string_view messages_json,
                                     std::string_view tools_json, const RenderOptions& options);

// The Values a template sees for one message / the tool list (api.Message, api.Tools).
Value message_value(const Message& m);
Value tools_value(const std::vector<Tool>& tools);

}  // namespace paddock::chat
