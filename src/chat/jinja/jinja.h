// Sandboxed Jinja engine for the chat templates shipped inside GGUF files
// (`tokenizer.chat_template`), rendering them like Hugging Face's apply_chat_template:
// jinja2's ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks, loop controls,
// HF's tojson (insertion order, ensure_ascii off), raise_exception and strftime_now.
//
// Invariants: a parsed Template is immutable and may be rendered concurrently; rendering
// never touches the host (no files, no environment, no attribute walks to internals),
// never mutates the context, and stops with an error at the limits in Options::limits.
// Errors carry jinja2's exception name and the template line: "TemplateError: System role
// not supported (line 3)". Nothing throws out of this API.
//
// The context of a chat template is an object such as
//   {"messages": [...], "tools": [...]?, "add_generation_prompt": true,
//    "bos_token": "<s>", "eos_token": "</s>", ...any extra variables the template reads}.
//
//   PADDOCK_ASSIGN(auto tmpl, jinja::Template::parse(source, jinja::Options{}));
//   PADDOCK_ASSIGN(std::string prompt, tmpl.render(context));
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "chat/jinja/limits.h"

namespace paddock::jinja {

struct Options {
  bool trim_blocks = true;    // drop the first newline after a block tag (HF sets both)
  bool lstrip_blocks = true;  // drop spaces/tabs before a block tag at the start of a line
  // The date strftime_now formats, "YYYY-MM-DD" (time 00:00:00). Empty: the current UTC time.
  std::string date;
  Limits limits;
};

class Template {
 public:
  // Syntax errors (and an invalid Options::date) are kInvalidArgument with the line.
  static Result<Template> parse(std::string_view source, const Options& options = {});

  // Renders with `context` (an object; its keys become variables). Template errors are
  // kInvalidArgument; hitting a limit is kResourceExhausted. Pass ordered_json: tojson
  // prints objects in their order (a plain json sorts keys, unlike Python dicts).
  Result<std::string> render(const nlohmann::ordered_json& context) const;
  Result<std::string> render(const nlohmann::json& context) const;

  struct Parsed;  // opaque: the syntax tree and options

 private:
  explicit Template(std::shared_ptr<const Parsed> parsed) : parsed_(std::move(parsed)) {}
  std::shared_ptr<const Parsed> parsed_;
};

}  // namespace paddock::jinja
