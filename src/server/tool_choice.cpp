#include "server/tool_choice.h"

#include "sample/json_schema.h"

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

struct Markup {
  std::string open, close;
};

// The text around the call object, as the template writes it and the parser reads it.
Markup call_markup(const PromptTemplate& t) {
  const std::string& tag = t.tool_tag;
  if (tag.empty() || tag == "{") return {};
  const bool xml = tag.size() > 2 && tag.front() == '<' && tag[1] != '/' && tag.back() == '>';
  if (xml) {
    // Hermes/Qwen style: "<tool_call>\n{...}\n</tool_call>".
    const std::string close = "</" + tag.substr(1);
    return {tag + "\n", t.text.find(close) != std::string::npos ? "\n" + close : ""};
  }
  return {tag, tag.back() == '[' ? "]" : ""};
}

}  // namespace

Result<std::string> forced_tool_call_grammar(const PromptTemplate& t, const ChatRequest& req,
                                             bool prompt_opens_thinking) {
  using Mode = ToolChoice::Mode;
  const Mode mode = req.tool_choice.mode;
  if ((mode != Mode::kRequired && mode != Mode::kNamed) || req.tools.empty()) return std::string();
  // A Harmony call is a whole message (header, channel, recipient) after free reasoning: not
  // forced yet, and said so rather than silently left to the model.
  if (t.harmony)
    return invalid_argument("tool_choice: forcing a call is not supported for Harmony (gpt-oss) models");
  Json choices = Json::array();
  for (const chat::Tool& tool : req.tools) {
    if (mode == Mode::kRequired || tool.name == req.tool_choice.name) choices.push_back(call_schema(tool));
  }
  const Json schema = choices.size() == 1 ? choices[0] : Json{{"anyOf", choices}};
  Markup m = call_markup(t);
  // The thinking parser reads everything before the closing tag as thinking, the call included.
  if (prompt_opens_thinking && !t.think_tags.second.empty()) m.open = t.think_tags.second + "\n\n" + m.open;
  auto gbnf = sample::json_schema_to_gbnf(schema, m.open, m.close);
  if (!gbnf.ok()) {
    return invalid_argument("tool_choice: the tools' parameters cannot be enforced: " +
                            gbnf.status().message());
  }
  return gbnf;
}

}  // namespace paddock::server
