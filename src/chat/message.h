// Chat messages, tool calls and tool definitions as Ollama's API carries them, shared by
// the server, the Go-template path and the Jinja path. JSON conversion accepts Ollama's
// request form (role lower-cased, `arguments` an object, or a JSON string holding one).
//   PADDOCK_ASSIGN(std::vector<Message> msgs, messages_from_json(body["messages"]));
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace paddock::chat {

struct ToolCall {
  std::string id;  // "call_xxxxxxxx"; may be empty
  int index = 0;
  std::string name;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();  // key order preserved
};

struct Message {
  std::string role;  // system | user | assistant | tool
  std::string content;
  std::string thinking;
  std::vector<std::string> images;  // base64
  std::vector<ToolCall> tool_calls;
  std::string tool_name;
  std::string tool_call_id;
};

// A tool definition: {"type":"function","function":{"name","description","parameters"}}.
struct Tool {
  std::string type = "function";
  nlohmann::ordered_json items;  // null when absent
  std::string name;
  std::string description;
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
};

Result<Message> message_from_json(const nlohmann::ordered_json& j);
Result<std::vector<Message>> messages_from_json(const nlohmann::ordered_json& j);
Result<ToolCall> tool_call_from_json(const nlohmann::ordered_json& j);
Result<Tool> tool_from_json(const nlohmann::ordered_json& j);
Result<std::vector<Tool>> tools_from_json(const nlohmann::ordered_json& j);  // null -> empty

// Ollama's response form (omitempty fields left out; tool call `index` always present).
nlohmann::ordered_json to_json(const Message& m);
nlohmann::ordered_json to_json(const ToolCall& c);

}  // namespace paddock::chat
