#include "server/responses.h"

#include <map>

#include "base/json_depth.h"
#include "server/api_util.h"
#include "server/sse.h"

namespace paddock::server::responses {

namespace {

// `at`: where `j` is ("" for the body).
Result<std::string> required_string(const Json& j, const char* key, const std::string& at) {
  const Json* v = field(j, key);
  if (!v || !v->is_string()) return field_error(at.empty() ? key : at + "." + key, "expected a string");
  return v->get<std::string>();
}

// Native messages from input items. An assistant's turn (its message, reasoning and function
// calls, which the Responses API sends as separate items) becomes one native assistant message.
class MessageBuilder {
 public:
  explicit MessageBuilder(Json* out) : out_(out) {}

  Status add_input(const Json& input, const std::string& at) {
    if (input.is_string()) {
      out_->push_back(Json{{"role", "user"}, {"content", input}});
      return Status::ok();
    }
    if (!input.is_array()) return field_error(at, "expected a string or an array of items");
    for (size_t i = 0; i < input.size(); ++i) {
      PADDOCK_TRY(add_item(input[i], at + "[" + std::to_string(i) + "]"));
    }
    return Status::ok();
  }

  // Each function_call_output names its tool, as the templates render it.
  void name_tool_results() {
    std::map<std::string, std::string> names;  // call id -> function name
    for (Json& m : *out_) {
      if (m.contains("tool_calls")) {
        for (const Json& c : m["tool_calls"]) names[c.value("id", "")] = c["function"].value("name", "");
      }
      if (m["role"] == "tool") {
        const auto it = names.find(m.value("tool_call_id", ""));
        if (it != names.end()) m["tool_name"] = it->second;
      }
    }
  }

 private:
  Status add_item(const Json& item, const std::string& at) {
    if (!item.is_object()) return field_error(at, "expected an object");
    const Json* type = field(item, "type");
    if (type && !type->is_string()) return field_error(at + ".type", "expected a string");
    // An "easy" input message has a role and no type.
    const std::string t = type ? type->get<std::string>() : "message";
    if (t == "message") return add_message(item, at);
    if (t == "function_call") return add_function_call(item, at);
    if (t == "function_call_output") return add_function_output(item, at);
    if (t == "reasoning") return add_reasoning(item, at);
    if (t == "item_reference")
      return field_error(at,
                         "item references are not supported: send the item itself or previous_response_id");
    return field_error(at + ".type", "unsupported item type " + json_excerpt(*type));
  }

  Status add_message(const Json& item, const std::string& at) {
    PADDOCK_ASSIGN(std::string role, required_string(item, "role", at));
    if (role == "developer") role = "system";
    if (role != "user" && role != "assistant" && role != "system")
      return field_error(at + ".role", "must be \"user\", \"assistant\", \"system\" or \"developer\", not " +
                                           json_excerpt(item["role"]));
    const Json* content = field(item, "content");
    if (!content) return field_error(at + ".content", "expected a string or an array of content parts");
    std::string text;
    Json images = Json::array();
    if (content->is_string()) {
      text = content->get<std::string>();
    } else if (content->is_array()) {
      for (size_t i = 0; i < content->size(); ++i) {
        PADDOCK_TRY(add_part((*content)[i], at + ".content[" + std::to_string(i) + "]", &text, &images));
      }
    } else {
      return field_error(at + ".content", "expected a string or an array of content parts");
    }
    if (role == "assistant") {
      Json& m = assistant_turn();
      m["content"] = m["content"].get<std::string>() + text;
      return Status::ok();
    }
    Json m{{"role", role}, {"content", text}};
    if (!images.empty()) m["images"] = std::move(images);
    out_->push_back(std::move(m));
    return Status::ok();
  }

  static Status add_part(const Json& part, const std::string& at, std::string* text, Json* images) {
    if (!part.is_object()) return field_error(at, "expected a content part object");
    PADDOCK_ASSIGN(const std::string type, required_string(part, "type", at));
    if (type == "input_text" || type == "output_text") {
      PADDOCK_ASSIGN(const std::string t, required_string(part, "text", at));
      *text += t;
    } else if (type == "refusal") {
      PADDOCK_ASSIGN(const std::string t, required_string(part, "refusal", at));
      *text += t;
    } else if (type == "input_image") {
      const Json* url = field(part, "image_url");
      const std::string u = url && url->is_string() ? url->get<std::string>() : "";
      const size_t comma = u.find(";base64,");
      if (u.rfind("data:", 0) != 0 || comma == std::string::npos)
        return field_error(at + ".image_url",
                           "only base64 data: URLs are supported (no file_id, no http URLs)");
      images->push_back(u.substr(comma + 8));
    } else {
      return field_error(at + ".type", "unsupported content part type " + json_excerpt(part["type"]));
    }
    return Status::ok();
  }

  Status add_function_call(const Json& item, const std::string& at) {
    PADDOCK_ASSIGN(const std::string call_id, required_string(item, "call_id", at));
    PADDOCK_ASSIGN(const std::string name, required_string(item, "name", at));
    PADDOCK_ASSIGN(const std::string text, required_string(item, "arguments", at));
    if (json_too_deep(text)) return field_error(at + ".arguments", "nested too deep");
    Json args = text.empty() ? Json::object() : Json::parse(text, nullptr, false);
    if (args.is_discarded() || !args.is_object())
      return field_error(at + ".arguments", "expected a JSON object in a string");
    Json& m = assistant_turn();
    if (!m.contains("tool_calls")) m["tool_calls"] = Json::array();
    m["tool_calls"].push_back(Json{{"id", call_id}, {"function", Json{{"name", name}, {"arguments", args}}}});
    return Status::ok();
  }

  Status add_function_output(const Json& item, const std::string& at) {
    PADDOCK_ASSIGN(const std::string call_id, required_string(item, "call_id", at));
    const Json* output = field(item, "output");
    std::string text;
    if (output && output->is_string()) {
      text = output->get<std::string>();
    } else if (output && output->is_array()) {
      Json images = Json::array();
      for (size_t i = 0; i < output->size(); ++i) {
        PADDOCK_TRY(add_part((*output)[i], at + ".output[" + std::to_string(i) + "]", &text, &images));
      }
      if (!images.empty())
        return field_error(at + ".output", "images in a function call output are not supported");
    } else {
      return field_error(at + ".output", "expected a string or an array of content parts");
    }
    out_->push_back(Json{{"role", "tool"}, {"content", text}, {"tool_call_id", call_id}});
    return Status::ok();
  }

  // The text of a reasoning item (its reasoning_text content, else its summary) becomes the
  // thinking of the assistant's turn; an encrypted one is nothing a local model can read.
  Status add_reasoning(const Json& item, const std::string& at) {
    std::string text;
    for (const char* key : {"content", "summary"}) {
      const Json* parts = field(item, key);
      if (!parts || !text.empty()) continue;
      if (!parts->is_array()) return field_error(at + "." + key, "expected an array");
      for (const Json& p : *parts) {
        if (p.is_object() && p.contains("text") && p["text"].is_string())
          text += p["text"].get<std::string>();
      }
    }
    if (!text.empty()) {
      Json& m = assistant_turn();
      m["thinking"] = m.value("thinking", "") + text;
    }
    return Status::ok();
  }

  // The assistant message the next assistant item joins: the last message when it is the
  // assistant's (so reasoning, text and calls of one turn stay together), else a new one.
  Json& assistant_turn() {
    if (out_->empty() || out_->back()["role"] != "assistant")
      out_->push_back(Json{{"role", "assistant"}, {"content", ""}});
    return out_->back();
  }

  Json* out_;
};

Result<Json> translate_tools(const Json& tools) {
  if (!tools.is_array()) return field_error("tools", "expected an array");
  Json out = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    if (!t.is_object()) return field_error(at, "expected an object");
    PADDOCK_ASSIGN(const std::string type, required_string(t, "type", at));
    if (type != "function")
      return field_error(at + ".type", "only function tools are supported, not " + json_excerpt(t["type"]));
    PADDOCK_ASSIGN(const std::string name, required_string(t, "name", at));
    if (name.empty()) return field_error(at + ".name", "expected a non-empty string");
    const Json* description = field(t, "description");
    if (description && !description->is_string())
      return field_error(at + ".description", "expected a string");
    const Json* parameters = field(t, "parameters");
    if (parameters && !parameters->is_object()) return field_error(at + ".parameters", "expected an object");
    out.push_back(Json{{"type", "function"},
                       {"function", Json{{"name", name},
                                         {"description", description ? *description : Json("")},
                                         {"parameters", parameters ? *parameters : Json::object()}}}});
  }
  return out;
}

Result<Json> translate_tool_choice(const Json& choice) {
  if (choice.is_string()) {
    const std::string c = choice.get<std::string>();
    if (c == "auto" || c == "none" || c == "required") return choice;
    return field_error("tool_choice",
                       "must be \"auto\", \"none\" or \"required\", not " + json_excerpt(choice));
  }
  if (!choice.is_object()) return field_error("tool_choice", "expected a string or an object");
  PADDOCK_ASSIGN(const std::string type, required_string(choice, "type", "tool_choice"));
  if (type != "function")
    return field_error("tool_choice.type",
                       "only \"function\" is supported, not " + json_excerpt(choice["type"]));
  PADDOCK_ASSIGN(const std::string name, required_string(choice, "name", "tool_choice"));
  return Json{{"type", "function"}, {"function", Json{{"name", name}}}};
}

// text.format -> the native `format`: null for plain text.
Result<Json> translate_text_format(const Json& text) {
  if (!text.is_object()) return field_error("text", "expected an object");
  const Json* format = field(text, "format");
  if (!format) return Json();
  if (!format->is_object()) return field_error("text.format", "expected an object");
  PADDOCK_ASSIGN(const std::string type, required_string(*format, "type", "text.format"));
  if (type == "text") return Json();
  if (type == "json_object") return Json("json");
  if (type != "json_schema")
    return field_error("text.format.type", "must be \"text\", \"json_object\" or \"json_schema\", not " +
                                               json_excerpt((*format)["type"]));
  const Json* schema = field(*format, "schema");
  if (!schema || !schema->is_object())
    return field_error("text.format.schema", "expected a JSON Schema object");
  return *schema;
}

Result<Json> translate_reasoning(const Json& reasoning) {
  if (!reasoning.is_object()) return field_error("reasoning", "expected an object");
  const Json* effort = field(reasoning, "effort");
  if (!effort) return Json();
  if (!effort->is_string()) return field_error("reasoning.effort", "expected a string");
  return think_for_effort(effort->get<std::string>());
}

// A sampling number: the request's, else OpenAI's default of 1.
Result<Json> number_or_one(const Json& body, const char* key) {
  const Json* v = field(body, key);
  if (!v) return Json(1.0);
  if (!v->is_number()) return field_error(key, "expected a number");
  return *v;
}

Result<bool> optional_bool(const Json& body, const char* key, bool fallback) {
  const Json* v = field(body, key);
  if (!v) return fallback;
  if (!v->is_boolean()) return field_error(key, "expected a boolean");
  return v->get<bool>();
}

Json value_or(const Json& body, const char* key, Json fallback) {
  const Json* v = field(body, key);
  return v ? *v : fallback;
}

Json usage(const Json& native) {
  const int64_t in = native.value("prompt_eval_count", int64_t{0}),
                out = native.value("eval_count", int64_t{0});
  return Json{
      {"input_tokens", in},
      {"input_tokens_details", Json{{"cached_tokens", native.value("prompt_cached_count", int64_t{0})}}},
      {"output_tokens", out},
      {"output_tokens_details", Json{{"reasoning_tokens", 0}}},
      {"total_tokens", in + out}};
}

}  // namespace

Result<std::string> previous_response_id(const Json& body) {
  if (!body.is_object()) return std::string();
  const Json* id = field(body, "previous_response_id");
  if (!id) return std::string();
  if (!id->is_string() || id->get<std::string>().empty())
    return field_error("previous_response_id", "expected a non-empty string");
  return id->get<std::string>();
}

namespace {

// max_output_tokens, temperature, top_p -> native options.
Result<Json> sampling_options(const Json& body) {
  Json options = Json::object();
  if (const Json* max_tokens = field(body, "max_output_tokens")) {
    if (!max_tokens->is_number_integer() || max_tokens->get<int64_t>() < 1)
      return field_error("max_output_tokens", "expected an integer of at least 1");
    options["num_predict"] = *max_tokens;
  }
  PADDOCK_ASSIGN(options["temperature"], number_or_one(body, "temperature"));
  PADDOCK_ASSIGN(options["top_p"], number_or_one(body, "top_p"));
  return options;
}

// tools, tool_choice, text.format, reasoning.effort -> their native fields in `native`.
Status add_native_fields(const Json& body, Json* native) {
  if (const Json* tools = field(body, "tools")) {
    PADDOCK_ASSIGN(Json t, translate_tools(*tools));
    if (!t.empty()) (*native)["tools"] = std::move(t);
  }
  if (const Json* choice = field(body, "tool_choice")) {
    PADDOCK_ASSIGN((*native)["tool_choice"], translate_tool_choice(*choice));
  }
  if (const Json* text = field(body, "text")) {
    PADDOCK_ASSIGN(Json format, translate_text_format(*text));
    if (!format.is_null()) (*native)["format"] = std::move(format);
  }
  if (const Json* reasoning = field(body, "reasoning")) {
    PADDOCK_ASSIGN(Json think, translate_reasoning(*reasoning));
    if (!think.is_null()) (*native)["think"] = std::move(think);
  }
  return Status::ok();
}

// The request fields a response object repeats, with OpenAI's defaults; `body` is valid.
Json echo_fields(const Json& body, bool store, const Json& options) {
  const Json* reasoning = field(body, "reasoning");
  const Json* text = field(body, "text");
  const Json plain{{"type", "text"}};
  return Json{{"instructions", value_or(body, "instructions", nullptr)},
              {"max_output_tokens", value_or(body, "max_output_tokens", nullptr)},
              {"parallel_tool_calls", value_or(body, "parallel_tool_calls", true)},
              {"previous_response_id", value_or(body, "previous_response_id", nullptr)},
              {"reasoning", Json{{"effort", reasoning ? value_or(*reasoning, "effort", nullptr) : Json()},
                                 {"summary", reasoning ? value_or(*reasoning, "summary", nullptr) : Json()}}},
              {"store", store},
              {"temperature", options["temperature"]},
              {"text", Json{{"format", text ? value_or(*text, "format", plain) : plain}}},
              {"tool_choice", value_or(body, "tool_choice", "auto")},
              {"tools", value_or(body, "tools", Json::array())},
              {"top_p", options["top_p"]},
              {"truncation", "disabled"},
              {"user", value_or(body, "user", nullptr)},
              {"metadata", value_or(body, "metadata", Json::object())}};
}

}  // namespace

Result<Request> to_native_chat(const Json& body, const Json& history, const Json& previous_output) {
  if (!body.is_object()) return invalid_argument("invalid request body: expected a JSON object");
  PADDOCK_ASSIGN(const std::string model, required_string(body, "model", ""));
  if (model.empty()) return field_error("model", "expected a non-empty string");
  if (field(body, "background") && body["background"] == true)
    return field_error("background", "background responses are not supported");
  Request req;
  PADDOCK_ASSIGN(req.store, optional_bool(body, "store", true));
  PADDOCK_ASSIGN(const bool stream, optional_bool(body, "stream", false));
  PADDOCK_ASSIGN(const Json options, sampling_options(body));

  req.messages = history;
  MessageBuilder builder(&req.messages);
  PADDOCK_TRY(builder.add_input(previous_output, "previous_response.output"));
  const Json* input = field(body, "input");
  if (!input) return field_error("input", "expected a string or an array of items");
  PADDOCK_TRY(builder.add_input(*input, "input"));
  if (req.messages.empty()) return field_error("input", "expected at least one item");
  builder.name_tool_results();

  Json messages = Json::array();
  const Json* instructions = field(body, "instructions");
  if (instructions && !instructions->is_string()) return field_error("instructions", "expected a string");
  if (instructions && !instructions->get<std::string>().empty())
    messages.push_back(Json{{"role", "system"}, {"content", *instructions}});
  for (const Json& m : req.messages) messages.push_back(m);

  req.native =
      Json{{"model", model}, {"messages", std::move(messages)}, {"stream", stream}, {"options", options}};
  PADDOCK_TRY(add_native_fields(body, &req.native));
  req.echo = echo_fields(body, req.store, options);
  return req;
}

ResponseBuilder::ResponseBuilder(Meta meta) {
  response_ = Json{{"id", meta.id},           {"object", "response"},   {"created_at", meta.created_at},
                   {"status", "in_progress"}, {"error", nullptr},       {"incomplete_details", nullptr},
                   {"model", meta.model},     {"output", Json::array()}};
  for (const auto& [key, value] : meta.echo.items()) response_[key] = value;
  response_["usage"] = nullptr;
}

Json ResponseBuilder::event(const std::string& type, Json fields) {
  Json e{{"type", type}};
  for (const auto& [key, value] : fields.items()) e[key] = value;
  e["sequence_number"] = sequence_++;
  return e;
}

std::vector<Json> ResponseBuilder::start() {
  return {event("response.created", Json{{"response", response_}}),
          event("response.in_progress", Json{{"response", response_}})};
}

std::vector<Json> ResponseBuilder::open_item(Open kind) {
  if (open_ == kind) return {};
  std::vector<Json> out = close_item("completed");
  open_ = kind;
  open_text_.clear();
  const bool text = kind == Open::kText;
  const std::string id = random_id(text ? "msg_" : "rs_");
  Json item = text ? Json{{"id", id},
                          {"type", "message"},
                          {"status", "in_progress"},
                          {"role", "assistant"},
                          {"content", Json::array()}}
                   : Json{{"id", id},
                          {"type", "reasoning"},
                          {"status", "in_progress"},
                          {"summary", Json::array()},
                          {"content", Json::array()}};
  Json& output = response_["output"];
  output.push_back(item);
  const size_t index = output.size() - 1;
  const Json part = text ? Json{{"type", "output_text"}, {"text", ""}, {"annotations", Json::array()}}
                         : Json{{"type", "reasoning_text"}, {"text", ""}};
  out.push_back(event("response.output_item.added", Json{{"output_index", index}, {"item", item}}));
  out.push_back(event("response.content_part.added",
                      Json{{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"part", part}}));
  output[index]["content"].push_back(part);
  return out;
}

std::vector<Json> ResponseBuilder::close_item(const std::string& status) {
  if (open_ == Open::kNone) return {};
  const bool text = open_ == Open::kText;
  open_ = Open::kNone;
  Json& output = response_["output"];
  const size_t index = output.size() - 1;
  Json& item = output[index];
  item["status"] = status;
  item["content"][0]["text"] = open_text_;
  const Json id = item["id"];
  std::vector<Json> out;
  out.push_back(
      event(text ? "response.output_text.done" : "response.reasoning_text.done",
            Json{{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"text", open_text_}}));
  out.push_back(event(
      "response.content_part.done",
      Json{{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"part", item["content"][0]}}));
  out.push_back(event("response.output_item.done", Json{{"output_index", index}, {"item", item}}));
  return out;
}

std::vector<Json> ResponseBuilder::function_call(const Json& call) {
  std::vector<Json> out = close_item("completed");
  const Json& f = call["function"];
  const std::string call_id = call.value("id", "");
  const std::string arguments = f.value("arguments", Json::object()).dump();
  Json item{{"id", random_id("fc_")},      {"type", "function_call"},
            {"status", "in_progress"},     {"call_id", call_id.empty() ? random_id("call_") : call_id},
            {"name", f.value("name", "")}, {"arguments", ""}};
  Json& output = response_["output"];
  const size_t index = output.size();
  const Json id = item["id"];
  out.push_back(event("response.output_item.added", Json{{"output_index", index}, {"item", item}}));
  out.push_back(event("response.function_call_arguments.delta",
                      Json{{"item_id", id}, {"output_index", index}, {"delta", arguments}}));
  out.push_back(event("response.function_call_arguments.done",
                      Json{{"item_id", id}, {"output_index", index}, {"arguments", arguments}}));
  item["arguments"] = arguments;
  item["status"] = "completed";
  output.push_back(item);
  out.push_back(event("response.output_item.done", Json{{"output_index", index}, {"item", item}}));
  return out;
}

std::vector<Json> ResponseBuilder::finish(const Json& done) {
  const bool incomplete = done.value("done_reason", "") == "length";
  std::vector<Json> out = close_item(incomplete ? "incomplete" : "completed");
  response_["status"] = incomplete ? "incomplete" : "completed";
  if (incomplete) response_["incomplete_details"] = Json{{"reason", "max_output_tokens"}};
  response_["usage"] = usage(done);
  finished_ = true;
  out.push_back(
      event(incomplete ? "response.incomplete" : "response.completed", Json{{"response", response_}}));
  return out;
}

std::vector<Json> ResponseBuilder::fail(const std::string& message) {
  const std::string m = public_message(message);
  std::vector<Json> out = close_item("incomplete");
  response_["status"] = "failed";
  response_["error"] = Json{{"code", "server_error"}, {"message", m}};
  finished_ = true;
  out.push_back(event("response.failed", Json{{"response", response_}}));
  out.push_back(event("error", Json{{"code", "server_error"}, {"message", m}, {"param", nullptr}}));
  return out;
}

std::vector<Json> ResponseBuilder::add(const Json& chunk) {
  if (finished_) return {};
  if (chunk.contains("error"))
    return fail(chunk["error"].is_string() ? chunk["error"].get<std::string>() : "error");
  std::vector<Json> out;
  auto append = [&out](std::vector<Json> events) {
    for (Json& e : events) out.push_back(std::move(e));
  };
  auto delta = [&](Open kind, const std::string& text) {
    if (text.empty()) return;
    append(open_item(kind));
    open_text_ += text;
    const Json& item = response_["output"].back();
    out.push_back(event(kind == Open::kText ? "response.output_text.delta" : "response.reasoning_text.delta",
                        Json{{"item_id", item["id"]},
                             {"output_index", response_["output"].size() - 1},
                             {"content_index", 0},
                             {"delta", text}}));
  };
  const Json& m = chunk.contains("message") ? chunk["message"] : Json::object();
  delta(Open::kReasoning, m.value("thinking", ""));
  delta(Open::kText, m.value("content", ""));
  if (m.contains("tool_calls")) {
    for (const Json& c : m["tool_calls"]) append(function_call(c));
  }
  if (chunk.value("done", false)) append(finish(chunk));
  return out;
}

std::string sse(const std::vector<Json>& events) {
  std::string out;
  for (const Json& e : events) out += sse_event(e, e["type"].get<std::string>());
  return out;
}

}  // namespace paddock::server::responses
