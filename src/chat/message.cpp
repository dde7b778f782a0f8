#include "chat/message.h"

#include <algorithm>
#include <cctype>

#include "base/json_depth.h"

namespace paddock::chat {

namespace {

using json = nlohmann::ordered_json;

Status expect_type(const json& j, const char* key, json::value_t t, const char* what) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null() || it->type() == t) return Status::ok();
  return invalid_argument(std::string("message field \"") + key + "\": expected " + what + ", found " +
                          it->type_name());
}

std::string get_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || !it->is_string() ? std::string() : it->get<std::string>();
}

}  // namespace

Result<ToolCall> tool_call_from_json(const json& j) {
  if (!j.is_object())
    return invalid_argument(std::string("tool call: expected an object, found ") + j.type_name());
  ToolCall c;
  PADDOCK_TRY(expect_type(j, "id", json::value_t::string, "a string"));
  c.id = get_string(j, "id");
  auto f = j.find("function");
  if (f == j.end() || !f->is_object()) return invalid_argument("tool call: expected a \"function\" object");
  PADDOCK_TRY(expect_type(*f, "name", json::value_t::string, "a string"));
  c.name = get_string(*f, "name");
  if (auto idx = f->find("index"); idx != f->end() && idx->is_number_integer()) c.index = idx->get<int>();
  if (auto a = f->find("arguments"); a != f->end() && !a->is_null()) {
    if (a->is_object()) {
      c.arguments = *a;
    } else if (a->is_string()) {
      const std::string& text = a->get_ref<const std::string&>();
      if (json_too_deep(text)) return invalid_argument("tool call arguments: nested too deep");
      json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_object())
        return invalid_argument("tool call arguments: expected a JSON object in the string");
      c.arguments = std::move(parsed);
    } else {
      return invalid_argument(std::string("tool call arguments: expected an object, found ") +
                              a->type_name());
    }
  }
  return c;
}

Result<Message> message_from_json(const json& j) {
  if (!j.is_object())
    return invalid_argument(std::string("message: expected an object, found ") + j.type_name());
  for (const char* k : {"role", "content", "thinking", "tool_name", "tool_call_id"})
    PADDOCK_TRY(expect_type(j, k, json::value_t::string, "a string"));
  PADDOCK_TRY(expect_type(j, "images", json::value_t::array, "an array"));
  PADDOCK_TRY(expect_type(j, "tool_calls", json::value_t::array, "an array"));
  Message m;
  m.role = get_string(j, "role");
  std::transform(m.role.begin(), m.role.end(), m.role.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  m.content = get_string(j, "content");
  m.thinking = get_string(j, "thinking");
  m.tool_name = get_string(j, "tool_name");
  m.tool_call_id = get_string(j, "tool_call_id");
  if (auto it = j.find("images"); it != j.end() && it->is_array()) {
    for (const json& img : *it) {
      if (!img.is_string()) return invalid_argument("message images: expected base64 strings");
      m.images.push_back(img.get<std::string>());
    }
  }
  if (auto it = j.find("tool_calls"); it != j.end() && it->is_array()) {
    for (const json& c : *it) {
      PADDOCK_ASSIGN(ToolCall call, tool_call_from_json(c));
      m.tool_calls.push_back(std::move(call));
    }
  }
  return m;
}

Result<std::vector<Message>> messages_from_json(const json& j) {
  if (!j.is_array())
    return invalid_argument(std::string("messages: expected an array, found ") + j.type_name());
  std::vector<Message> out;
  for (size_t i = 0; i < j.size(); ++i) {
    Result<Message> m = message_from_json(j[i]);
    if (!m.ok()) return m.status().with_context("messages[" + std::to_string(i) + "]");
    out.push_back(std::move(m).value());
  }
  return out;
}

Result<Tool> tool_from_json(const json& j) {
  if (!j.is_object())
    return invalid_argument(std::string("tool: expected an object, found ") + j.type_name());
  Tool t;
  if (auto it = j.find("type"); it != j.end() && it->is_string()) t.type = it->get<std::string>();
  if (auto it = j.find("items"); it != j.end()) t.items = *it;
  auto f = j.find("function");
  if (f == j.end() || !f->is_object()) return invalid_argument("tool: expected a \"function\" object");
  t.name = get_string(*f, "name");
  t.description = get_string(*f, "description");
  if (auto p = f->find("parameters"); p != f->end() && !p->is_null()) {
    if (!p->is_object()) {
      return invalid_argument(std::string("tool parameters: expected an object, found ") + p->type_name());
    }
    t.parameters = *p;
  }
  return t;
}

Result<std::vector<Tool>> tools_from_json(const json& j) {
  std::vector<Tool> out;
  if (j.is_null()) return out;
  if (!j.is_array()) return invalid_argument(std::string("tools: expected an array, found ") + j.type_name());
  for (size_t i = 0; i < j.size(); ++i) {
    Result<Tool> t = tool_from_json(j[i]);
    if (!t.ok()) return t.status().with_context("tools[" + std::to_string(i) + "]");
    out.push_back(std::move(t).value());
  }
  return out;
}

json to_json(const ToolCall& c) {
  json j = json::object();
  if (!c.id.empty()) j["id"] = c.id;
  j["function"] = json{{"index", c.index}, {"name", c.name}, {"arguments", c.arguments}};
  return j;
}

json to_json(const Message& m) {
  json j = json{{"role", m.role}, {"content", m.content}};
  if (!m.thinking.empty()) j["thinking"] = m.thinking;
  if (!m.images.empty()) j["images"] = m.images;
  if (!m.tool_calls.empty()) {
    j["tool_calls"] = json::array();
    for (const ToolCall& c : m.tool_calls) j["tool_calls"].push_back(to_json(c));
  }
  if (!m.tool_name.empty()) j["tool_name"] = m.tool_name;
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  return j;
}

}  // namespace paddock::chat
