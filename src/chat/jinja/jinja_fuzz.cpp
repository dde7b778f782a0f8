// Fuzz target: parse and render arbitrary templates against a small chat context under
// tight limits. Any crash, sanitizer report, leak or hang is a bug; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/jinja/jinja.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::ordered_json kContext = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi \u00e9"},
      {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
        "function": {"name": "f", "arguments": {"x": 1.5, "y": [true, null]}}}]},
      {"role": "tool", "content": "{\"ok\": 1}"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
  paddock::jinja::Options opt;
  opt.date = "2024-07-26";
  opt.limits.max_output_bytes = 1 << 16;
  opt.limits.max_items = 4096;
  opt.limits.max_range = 1000;
  opt.limits.max_iterations = 20000;
  opt.limits.max_steps = 200000;
  opt.limits.max_call_depth = 16;
  opt.limits.max_nesting = 64;
  auto tmpl =
      paddock::jinja::Template::parse(std::string_view(reinterpret_cast<const char*>(data), size), opt);
  if (tmpl.ok()) (void)tmpl->render(kContext);
  return 0;
}
