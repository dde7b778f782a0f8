#include "server/tool_choice.h"

namespace paddock::server {

namespace {

Json call_schema(const chat::Tool& tool) {
  const Json& params = tool.parameters;
  const bool usable = params.is_object() && !params.empty();
  return Json{{"type", "object"},
              {"properties", Json{{"name", Json{{"const", tool.name}}},
                                  {"arguments", usable ? params : Json{{"type", "object"}}}}},
              {"required", Json::array({"name", "arguments"})},
              {"additionalProperties", false}};
}

}  // namespace

std::string forced_tool_call_format(const PromptTemplate& t, const ChatRequest& req) {
  using Mode = ToolChoice::Mode;
  const Mode mode = req.tool_choice.mode;
  if ((mode != Mode::kRequired && mode != Mode::kNamed) || req.tools.empty() || t.tool_tag != "{") return "";
  Json choices = Json::array();
  for (const chat::Tool& tool : req.tools) {
    if (mode == Mode::kRequired || tool.name == req.tool_choice.name) choices.push_back(call_schema(tool));
  }
  if (choices.size() == 1) return choices[0].dump();
  return Json{{"anyOf", choices}}.dump();
}

}  // namespace paddock::server
