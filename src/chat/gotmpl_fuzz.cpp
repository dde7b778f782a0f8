// Fuzzes the Go template engine: parse arbitrary text, then execute it against a fixed
// Ollama-shaped data set under tight limits (errors are fine; crashes and hangs are not).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/render.h"
#include "chat/thinking_parser.h"
#include "chat/tool_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paddock::chat;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::vector<Message> messages = {
      {"system", "sys", "", {}, {}, "", ""},
      {"user", "hi <there>", "", {}, {}, "", ""},
      {"assistant", "", "hmm", {}, {ToolCall{"call_1", 0, "get_weather", {{"city", "Paris"}}}}, "", ""},
      {"tool", "sunny", "", {}, {}, "get_weather", "call_1"}};
  static const std::vector<Tool> tools = {
      Tool{"function", nullptr, "get_weather", "Weather",
           nlohmann::ordered_json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})")}};
  paddock::Result<GoTemplate> tmpl = GoTemplate::parse(text);
  if (!tmpl.ok()) return 0;
  RenderOptions opt;
  opt.date = "2024-07-26";
  opt.limits.max_output_bytes = 1 << 16;
  opt.limits.max_steps = 200000;
  opt.limits.max_range_iterations = 20000;
  opt.limits.max_template_depth = 20;
  (void)render_chat(*tmpl, messages, tools, opt);
  ThinkingParser::infer_tags(*tmpl);
  ToolCallParser::infer_tag(*tmpl);
  return 0;
}
