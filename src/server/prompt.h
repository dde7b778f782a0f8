// Which chat template a model uses and how a request becomes a prompt: the request's
// `template` override, else the model's TEMPLATE layer (Go, as Ollama's models ship), else
// the GGUF's Jinja `tokenizer.chat_template` (with bos/eos from its vocabulary), else
// Ollama's plain default. The tool-call tag and thinking tags, whether the template is
// Harmony, and whether it takes tools and a suffix, are inferred once, here: the chat routes enforce these
// flags and /api/show's capabilities (capabilities.h) are derived from them.
//   PADDOCK_ASSIGN(PromptTemplate t, choose_template(info.template_text, info.model_path, {}));
//   PADDOCK_ASSIGN(std::string p, render_messages(t, messages, tools, think));
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "chat/gotmpl.h"
#include "chat/jinja/jinja.h"
#include "chat/message.h"
#include "server/requests.h"

namespace paddock::server {

struct PromptTemplate {
  std::string text;                                // the source in use (what /api/show prints)
  std::shared_ptr<const chat::GoTemplate> go;      // set for Go templates
  std::shared_ptr<const jinja::Template> jinja;    // set for GGUF Jinja templates
  std::string bos_token, eos_token;                // Jinja context
  std::string tool_tag = "{";                      // where tool calls start in the output
  std::pair<std::string, std::string> think_tags;  // {"", ""} = no thinking support
  bool supports_insert = false;                    // the template uses .Suffix
  bool supports_tools = false;
  // Harmony (gpt-oss): the output's channels carry thinking and tool calls (harmony_parser.h),
  // and `think` levels set the reasoning effort.
  bool harmony = false;
  bool supports_thinking() const { return harmony || !think_tags.first.empty(); }
};

// `model_template`: the TEMPLATE layer text, if any; `gguf_path`: the model file ("" = none).
Result<PromptTemplate> choose_template(const std::optional<std::string>& override_text,
                                       const std::optional<std::string>& model_template,
                                       const std::string& gguf_path);

Result<std::string> render_messages(const PromptTemplate& t, const std::vector<chat::Message>& messages,
                                    const std::vector<chat::Tool>& tools, const Think& think);

// /api/generate: system + prompt (+ suffix, which needs a template that uses .Suffix).
Result<std::string> render_generate(const PromptTemplate& t, const std::string& system,
                                    const std::string& prompt, const std::string& suffix, const Think& think);

}  // namespace paddock::server
