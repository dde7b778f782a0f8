#include "chat/render.h"

namespace paddock::chat {

namespace {

using json = nlohmann::ordered_json;
using Flavor = Value::Flavor;
using Printer = Value::Printer;

Value string_list(const json& j) {
  std::vector<Value> items;
  if (j.is_array()) {
    for (const json& e : j)
      items.push_back(e.is_string() ? Value(e.get<std::string>()) : Value::from_json(e));
  } else if (j.is_string()) {
    items.push_back(Value(j.get<std::string>()));
  }
  return Value::list(std::move(items));
}

Value any_value(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? Value() : Value::from_json(*it);
}

Value property_map(const json& j, int depth);

// api.ToolProperty
Value property_value(const json& p, int depth) {
  if (!p.is_object()) return Value::object(Flavor::kStruct, {}, "api.ToolProperty", Printer::kJson);
  std::vector<Value> any_of;
  if (auto it = p.find("anyOf"); it != p.end() && it->is_array() && depth < 32) {
    for (const json& alt : *it) any_of.push_back(property_value(alt, depth + 1));
  }
  std::vector<Value> types;
  if (auto it = p.find("type"); it != p.end()) types = string_list(*it).items();
  Value props;
  if (auto it = p.find("properties"); it != p.end() && it->is_object() && depth < 32)
    props = property_map(*it, depth + 1);
  Value required;
  if (auto it = p.find("required"); it != p.end()) required = string_list(*it);
  Value description;
  if (auto it = p.find("description"); it != p.end() && it->is_string())
    description = Value(it->get<std::string>());
  else
    description = Value("");
  return Value::object(
      Flavor::kStruct,
      {field("Type", "type", Value::list(std::move(types), Printer::kPropertyType), true),
       field("Description", "description", description, true),
       field("Enum", "enum", any_value(p, "enum"), true),
       field("Items", "items", any_value(p, "items"), true),
       field("AnyOf", "anyOf", Value::list(std::move(any_of)), true),
       field("Properties", "properties", props, true), field("Required", "required", required, true)},
      "api.ToolProperty");
}

Value property_map(const json& j, int depth) {
  std::vector<Field> fields;
  for (const auto& [k, v] : j.items()) fields.push_back(field(k, k, property_value(v, depth)));
  return Value::object(Flavor::kOrderedMap, std::move(fields), "api.ToolPropertiesMap", Printer::kJson);
}

Value tool_value(const Tool& t) {
  const json& p = t.parameters;
  Value props;
  if (auto it = p.find("properties"); it != p.end() && it->is_object()) props = property_map(*it, 0);
  Value required;
  if (auto it = p.find("required"); it != p.end()) required = string_list(*it);
  const std::string ptype = p.contains("type") && p["type"].is_string() ? p["type"].get<std::string>() : "";
  Value params =
      Value::object(Flavor::kStruct,
                    {field("Type", "type", Value(ptype)), field("Defs", "$defs", any_value(p, "$defs"), true),
                     field("Items", "items", any_value(p, "items"), true),
                     field("Required", "required", required, true), field("Properties", "properties", props)},
                    "api.ToolFunctionParameters", Printer::kJson);
  Value function = Value::object(
      Flavor::kStruct,
      {field("Name", "name", Value(t.name)), field("Description", "description", Value(t.description), true),
       field("Parameters", "parameters", params)},
      "api.ToolFunction", Printer::kJson);
  return Value::object(
      Flavor::kStruct,
      {field("Type", "type", Value(t.type)),
       field("Items", "items", t.items.is_null() ? Value() : Value::from_json(t.items), true),
       field("Function", "function", function)},
      "api.Tool", Printer::kJson);
}

Value tool_call_value(const ToolCall& c) {
  Value args =
      Value::from_json(c.arguments.is_object() ? c.arguments : json::object(), /*ordered_objects=*/true);
  args = Value::object(Flavor::kOrderedMap, args.fields(), "api.ToolCallFunctionArguments", Printer::kJson);
  Value function =
      Value::object(Flavor::kStruct,
                    {field("Index", "index", Value(c.index)), field("Name", "name", Value(c.name)),
                     field("Arguments", "arguments", args)},
                    "api.ToolCallFunction");
  return Value::object(Flavor::kStruct,
                       {field("ID", "id", Value(c.id), true), field("Function", "function", function)},
                       "api.ToolCall");
}

// collate(): the joined system prompt and the merged message list.
std::vector<Message> collate(const std::vector<Message>& msgs, std::string* system) {
  std::vector<Message> out;
  bool first_system = true;
  for (const Message& m : msgs) {
    if (m.role == "system") {
      if (!first_system) *system += "\n\n";
      *system += m.content;
      first_system = false;
    }
    if (!out.empty() && out.back().role == m.role && m.role != "tool") {
      out.back().content += "\n\n" + m.content;
    } else {
      out.push_back(m);
    }
  }
  return out;
}

std::vector<Field> think_fields(const RenderOptions& o) {
  return {field("Think", "Think", Value(o.think)), field("ThinkLevel", "ThinkLevel", Value(o.think_level)),
          field("IsThinkSet", "IsThinkSet", Value(o.is_think_set))};
}

Value legacy_data(const std::string& system, const std::string& prompt, const std::string& response,
                  const RenderOptions& o) {
  std::vector<Field> f = {field("System", "System", Value(system)), field("Prompt", "Prompt", Value(prompt)),
                          field("Response", "Response", Value(response))};
  for (Field& t : think_fields(o)) f.push_back(std::move(t));
  return Value::object(Flavor::kGoMap, std::move(f));
}

void add_image_tags(std::vector<Message>* msgs) {
  int next_id = 0;
  for (Message& m : *msgs) {
    std::string prefix;
    for (size_t i = 0; i < m.images.size(); ++i) {
      const std::string tag = "[img-" + std::to_string(next_id++) + "]";
      const size_t at = m.content.find("[img]");
      if (at == std::string::npos) {
        prefix += tag;
      } else {
        m.content.replace(at, 5, tag);
      }
    }
    m.content = prefix + m.content;
  }
}

}  // namespace

Value message_value(const Message& m) {
  std::vector<Value> images;
  for (const std::string& img : m.images) images.push_back(Value(img));
  std::vector<Value> calls;
  for (const ToolCall& c : m.tool_calls) calls.push_back(tool_call_value(c));
  return Value::object(Flavor::kStruct,
                       {field("Role", "role", Value(m.role)), field("Content", "content", Value(m.content)),
                        field("Thinking", "thinking", Value(m.thinking), true),
                        field("Images", "images", Value::list(std::move(images)), true),
                        field("ToolCalls", "tool_calls", Value::list(std::move(calls)), true),
                        field("ToolName", "tool_name", Value(m.tool_name), true),
                        field("ToolCallID", "tool_call_id", Value(m.tool_call_id), true)},
                       "api.Message");
}

Value tools_value(const std::vector<Tool>& tools) {
  std::vector<Value> items;
  for (const Tool& t : tools) items.push_back(tool_value(t));
  return Value::list(std::move(items), Printer::kJson);
}

Result<std::string> render_chat(const GoTemplate& tmpl, const std::vector<Message>& messages,
                                const std::vector<Tool>& tools, const RenderOptions& options) {
  ExecOptions exec;
  exec.limits = options.limits;
  exec.date = options.date;
  std::string system;
  std::vector<Message> tagged;
  const std::vector<Message>* source = &messages;
  if (options.image_tags) {
    tagged = messages;
    add_image_tags(&tagged);
    source = &tagged;
  }
  const std::vector<Message> collated = collate(*source, &system);
  if (tmpl.uses_var("messages")) {
    std::vector<Value> msgs;
    for (const Message& m : collated) msgs.push_back(message_value(m));
    std::vector<Field> f = {
        field("System", "System", Value(system)), field("Messages", "Messages", Value::list(std::move(msgs))),
        field("Tools", "Tools", tools_value(tools)), field("Response", "Response", Value(""))};
    for (Field& t : think_fields(options)) f.push_back(std::move(t));
    return tmpl.execute(Value::object(Flavor::kGoMap, std::move(f)), exec);
  }
  // Legacy: one execution per completed turn, then the final turn cut after .Response.
  std::string out;
  std::string sys, prompt, response;
  auto flush = [&]() -> Status {
    PADDOCK_ASSIGN(std::string part, tmpl.execute(legacy_data(sys, prompt, response, options), exec));
    if (out.size() + part.size() > options.limits.max_output_bytes) {
      return Status(Code::kResourceExhausted, "template: rendered prompt exceeds " +
                                                  std::to_string(options.limits.max_output_bytes) + " bytes");
    }
    out += part;
    sys.clear(), prompt.clear(), response.clear();
    return Status::ok();
  };
  for (const Message& m : collated) {
    if (m.role == "system") {
      if (!prompt.empty() || !response.empty()) PADDOCK_TRY(flush());
      sys = m.content;
    } else if (m.role == "user") {
      if (!response.empty()) PADDOCK_TRY(flush());
      prompt = m.content;
    } else if (m.role == "assistant") {
      response = m.content;
    }
  }
  const GoTemplate last = tmpl.truncated_after_response();
  PADDOCK_ASSIGN(std::string tail, last.execute(legacy_data(sys, prompt, response, options), exec));
  if (out.size() + tail.size() > options.limits.max_output_bytes) {
    return Status(Code::kResourceExhausted, "template: rendered prompt exceeds " +
                                                std::to_string(options.limits.max_output_bytes) + " bytes");
  }
  return out + tail;
}

Result<std::string> render_fim(const GoTemplate& tmpl, const std::string& prompt, const std::string& suffix,
                               const RenderOptions& options) {
  ExecOptions exec;
  exec.limits = options.limits;
  exec.date = options.date;
  std::vector<Field> f = {field("Prompt", "Prompt", Value(prompt)), field("Suffix", "Suffix", Value(suffix)),
                          field("Response", "Response", Value(""))};
  for (Field& t : think_fields(options)) f.push_back(std::move(t));
  return tmpl.execute(Value::object(Flavor::kGoMap, std::move(f)), exec);
}

Result<std::string> render_chat_json(std::string_view template_text, std::string_view messages_json,
                                     std::string_view tools_json, const RenderOptions& options) {
  PADDOCK_ASSIGN(GoTemplate tmpl, GoTemplate::parse(template_text));
  json mj = json::parse(messages_json, nullptr, /*allow_exceptions=*/false);
  if (mj.is_discarded()) return invalid_argument("messages: not valid JSON");
  PADDOCK_ASSIGN(std::vector<Message> messages, messages_from_json(mj));
  std::vector<Tool> tools;
  if (!tools_json.empty()) {
    json tj = json::parse(tools_json, nullptr, false);
    if (tj.is_discarded()) return invalid_argument("tools: not valid JSON");
    PADDOCK_ASSIGN(tools, tools_from_json(tj));
  }
  return render_chat(tmpl, messages, tools, options);
}

}  // namespace paddock::chat
