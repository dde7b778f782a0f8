#include "server/anthropic.h"

#include <map>

#include "server/api_util.h"
#include "server/sse.h"

namespace paddock::server::anthropic {

namespace {

// Text of a `system` or tool_result `content`: a string, or an array of text blocks.
Result<std::string> text_of(const Json& v, const std::string& field) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) return field_error(field, "expected a string or an array of text blocks");
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) {
    const Json& b = v[i];
    const std::string at = field + "." + std::to_string(i);
    if (!b.is_object() || !b.contains("type") || !b["type"].is_string())
      return field_error(at, "expected a content block with a \"type\"");
    const std::string type = b["type"].get<std::string>();
    if (type == "image" || type == "document") return field_error(at, type + " content is not supported yet");
    if (type != "text") return field_error(at, "unsupported content block type " + json_excerpt(b["type"]));
    if (!b.contains("text") || !b["text"].is_string()) return field_error(at + ".text", "expected a string");
    if (!text.empty()) text += "\n";
    text += b["text"].get<std::string>();
  }
  return text;
}

// One Anthropic message -> native messages (a user turn with tool results becomes one `tool`
// message per result, in block order, and a user message for its text).
Status add_message(const Json& m, const std::string& at, std::map<std::string, std::string>* tool_names,
                   Json* out) {
  if (!m.is_object()) return field_error(at, "expected an object");
  const Json* role_field = field(m, "role");
  if (!role_field || !role_field->is_string()) return field_error(at + ".role", "Field required");
  const std::string role = role_field->get<std::string>();
  if (role != "user" && role != "assistant")
    return field_error(at + ".role", "must be \"user\" or \"assistant\", not " + json_excerpt(*role_field));
  const Json* content = field(m, "content");
  if (!content) return field_error(at + ".content", "Field required");
  if (content->is_string()) {
    out->push_back(Json{{"role", role}, {"content", *content}});
    return Status::ok();
  }
  if (!content->is_array())
    return field_error(at + ".content", "expected a string or an array of content blocks");
  std::string text, thinking;
  Json calls = Json::array();
  bool pushed = false;
  auto flush_text = [&] {
    if (text.empty()) return;
    out->push_back(Json{{"role", role}, {"content", text}});
    text.clear();
    pushed = true;
  };
  for (size_t i = 0; i < content->size(); ++i) {
    const Json& b = (*content)[i];
    const std::string bat = at + ".content." + std::to_string(i);
    if (!b.is_object() || !b.contains("type") || !b["type"].is_string())
      return field_error(bat, "expected a content block with a \"type\"");
    const std::string type = b["type"].get<std::string>();
    if (type == "text") {
      if (!b.contains("text") || !b["text"].is_string())
        return field_error(bat + ".text", "expected a string");
      text += b["text"].get<std::string>();
    } else if (type == "image" || type == "document") {
      return field_error(bat, type + " content is not supported yet: send text");
    } else if (type == "thinking" && role == "assistant") {
      if (const Json* t = field(b, "thinking"); t && t->is_string()) thinking += t->get<std::string>();
    } else if (type == "redacted_thinking" && role == "assistant") {
      // Encrypted by another provider: nothing a local model can read.
    } else if (type == "tool_use" && role == "assistant") {
      const Json* id = field(b, "id");
      const Json* name = field(b, "name");
      const Json* input = field(b, "input");
      if (!id || !id->is_string()) return field_error(bat + ".id", "expected a string");
      if (!name || !name->is_string()) return field_error(bat + ".name", "expected a string");
      if (input && !input->is_object()) return field_error(bat + ".input", "expected an object");
      (*tool_names)[id->get<std::string>()] = name->get<std::string>();
      calls.push_back(Json{
          {"id", *id}, {"function", Json{{"name", *name}, {"arguments", input ? *input : Json::object()}}}});
    } else if (type == "tool_result" && role == "user") {
      const Json* id = field(b, "tool_use_id");
      if (!id || !id->is_string()) return field_error(bat + ".tool_use_id", "expected a string");
      std::string result;
      if (const Json* c = field(b, "content")) {
        PADDOCK_ASSIGN(result, text_of(*c, bat + ".content"));
      }
      flush_text();
      Json tool{{"role", "tool"}, {"content", result}, {"tool_call_id", *id}};
      if (const auto it = tool_names->find(id->get<std::string>()); it != tool_names->end())
        tool["tool_name"] = it->second;
      out->push_back(std::move(tool));
      pushed = true;
    } else {
      return field_error(
          bat, "unsupported content block type " + json_excerpt(b["type"]) + " in a " + role + " message");
    }
  }
  if (role == "assistant") {
    Json nm{{"role", role}, {"content", text}};
    if (!thinking.empty()) nm["thinking"] = thinking;
    if (!calls.empty()) nm["tool_calls"] = calls;
    out->push_back(std::move(nm));
    return Status::ok();
  }
  if (!text.empty() || !pushed) out->push_back(Json{{"role", role}, {"content", text}});
  return Status::ok();
}

Result<Json> translate_tools(const Json& tools) {
  if (!tools.is_array()) return field_error("tools", "expected an array");
  Json out = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    const std::string at = "tools." + std::to_string(i);
    if (!t.is_object()) return field_error(at, "expected an object");
    const Json* type = field(t, "type");
    if (type && (!type->is_string() || type->get<std::string>() != "custom"))
      return field_error(
          at + ".type", "only custom tools (with an input_schema) are supported, not " + json_excerpt(*type));
    const Json* name = field(t, "name");
    if (!name || !name->is_string() || name->get<std::string>().empty())
      return field_error(at + ".name", "Field required");
    const Json* schema = field(t, "input_schema");
    if (!schema || !schema->is_object()) return field_error(at + ".input_schema", "expected an object");
    const Json* description = field(t, "description");
    if (description && !description->is_string())
      return field_error(at + ".description", "expected a string");
    out.push_back(Json{{"type", "function"},
                       {"function", Json{{"name", *name},
                                         {"description", description ? *description : Json("")},
                                         {"parameters", *schema}}}});
  }
  return out;
}

Result<Json> translate_tool_choice(const Json& choice) {
  if (!choice.is_object() || !choice.contains("type") || !choice["type"].is_string())
    return field_error("tool_choice", "expected an object with a \"type\"");
  const std::string type = choice["type"].get<std::string>();
  if (type == "auto") return Json("auto");
  if (type == "none") return Json("none");
  if (type == "any") return Json("required");
  if (type == "tool") {
    const Json* name = field(choice, "name");
    if (!name || !name->is_string()) return field_error("tool_choice.name", "Field required");
    return Json{{"type", "function"}, {"function", Json{{"name", *name}}}};
  }
  return field_error("tool_choice.type",
                     "must be \"auto\", \"any\", \"tool\" or \"none\", not " + json_excerpt(choice["type"]));
}

Result<Json> translate_thinking(const Json& thinking) {
  if (!thinking.is_object() || !thinking.contains("type") || !thinking["type"].is_string())
    return field_error("thinking", "expected an object with a \"type\"");
  const std::string type = thinking["type"].get<std::string>();
  if (type == "disabled") return Json(false);
  if (type != "enabled")
    return field_error("thinking.type",
                       "must be \"enabled\" or \"disabled\", not " + json_excerpt(thinking["type"]));
  const Json* budget = field(thinking, "budget_tokens");
  if (!budget || !budget->is_number_integer() || budget->get<int64_t>() < 1)
    return field_error("thinking.budget_tokens", "expected a positive integer");
  // Anthropic's floor of 1024 and "less than max_tokens" are not enforced, as Ollama does not:
  // a small model with a small budget is a fair request, and max_tokens bounds the whole output.
  return Json{{"budget", *budget}};
}

Status number_option(const Json& body, const char* key, const char* native_key, Json* options) {
  const Json* v = field(body, key);
  if (!v) return Status::ok();
  if (!v->is_number()) return field_error(key, "expected a number");
  (*options)[native_key] = *v;
  return Status::ok();
}

std::string tool_use_id(const Json& call) {
  // Native ids are "call_xxxxxxxx"; Anthropic's clients expect "toolu_" (any id round-trips).
  const std::string id = call.value("id", "");
  return id.rfind("call_", 0) == 0 ? "toolu_" + id.substr(5) : id.empty() ? random_id("toolu_") : id;
}

Json tool_use_block(const Json& call, bool empty_input) {
  const Json& f = call["function"];
  return Json{{"type", "tool_use"},
              {"id", tool_use_id(call)},
              {"name", f.value("name", "")},
              {"input", empty_input ? Json::object() : f.value("arguments", Json::object())}};
}

Json usage(const Json& native, int64_t input_tokens) {
  return Json{{"input_tokens", input_tokens}, {"output_tokens", native.value("eval_count", int64_t{0})}};
}

}  // namespace

Result<Json> to_native_chat(const Json& body, bool count_only) {
  if (!body.is_object()) return invalid_argument("invalid request body: expected a JSON object");
  Json native = Json::object();
  const Json* model = field(body, "model");
  if (!model || !model->is_string() || model->get<std::string>().empty())
    return field_error("model", "Field required");
  native["model"] = *model;
  Json options = Json::object();
  if (const Json* max_tokens = field(body, "max_tokens")) {
    if (!max_tokens->is_number_integer() || max_tokens->get<int64_t>() < 1)
      return field_error("max_tokens", "expected an integer of at least 1");
    options["num_predict"] = *max_tokens;
  } else if (!count_only) {
    return field_error("max_tokens", "Field required");
  }
  PADDOCK_TRY(number_option(body, "temperature", "temperature", &options));
  PADDOCK_TRY(number_option(body, "top_p", "top_p", &options));
  if (const Json* top_k = field(body, "top_k")) {
    if (!top_k->is_number_integer()) return field_error("top_k", "expected an integer");
    options["top_k"] = *top_k;
  }
  if (const Json* stops = field(body, "stop_sequences")) {
    if (!stops->is_array()) return field_error("stop_sequences", "expected an array of strings");
    for (const Json& s : *stops) {
      if (!s.is_string()) return field_error("stop_sequences", "expected an array of strings");
    }
    if (!stops->empty()) options["stop"] = *stops;
  }
  native["options"] = options;
  const Json* stream = field(body, "stream");
  if (stream && !stream->is_boolean()) return field_error("stream", "expected a boolean");
  native["stream"] = stream && stream->get<bool>();

  Json messages = Json::array();
  if (const Json* system = field(body, "system")) {
    PADDOCK_ASSIGN(std::string text, text_of(*system, "system"));
    if (!text.empty()) messages.push_back(Json{{"role", "system"}, {"content", text}});
  }
  const Json* in = field(body, "messages");
  if (!in) return field_error("messages", "Field required");
  if (!in->is_array() || in->empty()) return field_error("messages", "expected a non-empty array");
  std::map<std::string, std::string> tool_names;  // tool_use id -> tool name, for the results
  for (size_t i = 0; i < in->size(); ++i) {
    PADDOCK_TRY(add_message((*in)[i], "messages." + std::to_string(i), &tool_names, &messages));
  }
  native["messages"] = std::move(messages);

  if (const Json* tools = field(body, "tools")) {
    PADDOCK_ASSIGN(Json t, translate_tools(*tools));
    if (!t.empty()) native["tools"] = std::move(t);
  }
  if (const Json* choice = field(body, "tool_choice")) {
    PADDOCK_ASSIGN(native["tool_choice"], translate_tool_choice(*choice));
  }
  if (const Json* thinking = field(body, "thinking")) {
    PADDOCK_ASSIGN(native["think"], translate_thinking(*thinking));
  }
  return native;
}

std::string stop_reason(const Json& native_final, bool called_tools) {
  if (native_final.value("done_reason", "") == "length") return "max_tokens";
  if (called_tools) return "tool_use";
  return native_final.contains("stop_sequence") ? "stop_sequence" : "end_turn";
}

Json stop_sequence(const Json& native_final) {
  const auto it = native_final.find("stop_sequence");
  return it != native_final.end() && it->is_string() ? *it : Json(nullptr);
}

Json message_from_native(const Json& native, const std::string& id, const std::string& model,
                         int64_t input_tokens) {
  const Json& m = native["message"];
  Json content = Json::array();
  const std::string thinking = m.value("thinking", "");
  if (!thinking.empty())
    content.push_back(Json{{"type", "thinking"}, {"thinking", thinking}, {"signature", ""}});
  const std::string text = m.value("content", "");
  if (!text.empty()) content.push_back(Json{{"type", "text"}, {"text", text}});
  const bool called = m.contains("tool_calls") && !m["tool_calls"].empty();
  if (called) {
    for (const Json& c : m["tool_calls"]) content.push_back(tool_use_block(c, false));
  }
  return Json{{"id", id},
              {"type", "message"},
              {"role", "assistant"},
              {"model", model},
              {"content", content},
              {"stop_reason", stop_reason(native, called)},
              {"stop_sequence", stop_sequence(native)},
              {"usage", usage(native, input_tokens)}};
}

EventStream::EventStream(std::string id, std::string model, int64_t input_tokens)
    : id_(std::move(id)), model_(std::move(model)), input_tokens_(input_tokens) {}

std::string EventStream::start() {
  const Json message{{"id", id_},
                     {"type", "message"},
                     {"role", "assistant"},
                     {"model", model_},
                     {"content", Json::array()},
                     {"stop_reason", nullptr},
                     {"stop_sequence", nullptr},
                     {"usage", Json{{"input_tokens", input_tokens_}, {"output_tokens", 0}}}};
  return sse_event(Json{{"type", "message_start"}, {"message", message}}, "message_start") +
         sse_event(Json{{"type", "ping"}}, "ping");
}

std::string EventStream::close_block() {
  if (open_ == Block::kNone) return "";
  open_ = Block::kNone;
  return sse_event(Json{{"type", "content_block_stop"}, {"index", index_}}, "content_block_stop");
}

std::string EventStream::open_block(Block kind) {
  if (open_ == kind) return "";
  std::string out = close_block();
  open_ = kind;
  ++index_;
  const Json block = kind == Block::kThinking
                         ? Json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}
                         : Json{{"type", "text"}, {"text", ""}};
  return out + sse_event(Json{{"type", "content_block_start"}, {"index", index_}, {"content_block", block}},
                         "content_block_start");
}

std::string EventStream::chunk(const Json& line) {
  if (line.contains("error"))
    return error(line["error"].is_string() ? line["error"].get<std::string>() : "error");
  std::string out;
  const Json& m = line.contains("message") ? line["message"] : Json::object();
  auto delta = [&](const Json& d) {
    out += sse_event(Json{{"type", "content_block_delta"}, {"index", index_}, {"delta", d}},
                     "content_block_delta");
  };
  const std::string thinking = m.value("thinking", "");
  if (!thinking.empty()) {
    out += open_block(Block::kThinking);
    delta(Json{{"type", "thinking_delta"}, {"thinking", thinking}});
  }
  const std::string text = m.value("content", "");
  if (!text.empty()) {
    out += open_block(Block::kText);
    delta(Json{{"type", "text_delta"}, {"text", text}});
  }
  if (m.contains("tool_calls")) {
    for (const Json& c : m["tool_calls"]) {
      out += close_block();
      ++index_;
      out += sse_event(
          Json{
              {"type", "content_block_start"}, {"index", index_}, {"content_block", tool_use_block(c, true)}},
          "content_block_start");
      delta(Json{{"type", "input_json_delta"},
                 {"partial_json", c["function"].value("arguments", Json::object()).dump()}});
      out += sse_event(Json{{"type", "content_block_stop"}, {"index", index_}}, "content_block_stop");
      called_tools_ = true;
    }
  }
  if (line.value("done", false)) {
    out += close_block();
    out += sse_event(Json{{"type", "message_delta"},
                          {"delta", Json{{"stop_reason", stop_reason(line, called_tools_)},
                                         {"stop_sequence", stop_sequence(line)}}},
                          {"usage", usage(line, input_tokens_)}},
                     "message_delta");
    out += sse_event(Json{{"type", "message_stop"}}, "message_stop");
  }
  return out;
}

std::string EventStream::error(const std::string& message) {
  return sse_event(
      Json{{"type", "error"}, {"error", Json{{"type", "api_error"}, {"message", public_message(message)}}}},
      "error");
}

HttpResponse error_response(int status, const std::string& message) {
  const char* type = status == 400                    ? "invalid_request_error"
                     : status == 401                  ? "authentication_error"
                     : status == 403                  ? "permission_error"
                     : status == 404                  ? "not_found_error"
                     : status == 413                  ? "request_too_large"
                     : status == 429                  ? "rate_limit_error"
                     : status == 503 || status == 529 ? "overloaded_error"
                                                      : "api_error";
  return json_response(
      status, Json{{"type", "error"}, {"error", Json{{"type", type}, {"message", public_message(message)}}}});
}

HttpResponse rewrap_native_error(const HttpResponse& native) {
  const Json j = Json::parse(native.body, nullptr, false);
  const bool has_message = j.is_object() && j.contains("error") && j["error"].is_string();
  return error_response(native.status, has_message ? j["error"].get<std::string>() : native.body);
}

}  // namespace paddock::server::anthropic
