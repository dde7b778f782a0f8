// The OpenAI-compatible routes, as Ollama's middleware does them: translate the request to
// the native one, run the native handler, translate its JSON (or each NDJSON line) back,
// streaming as SSE (`data: {...}\n\n` ... `data: [DONE]\n\n`).
#include <atomic>
#include <cstring>
#include <ctime>
#include <map>
#include <vector>

#include "base/json_depth.h"
#include "server/api.h"
#include "server/api_util.h"
#include "server/openai_logprobs.h"
#include "server/sse.h"

namespace paddock::server {

namespace {

std::string make_id(const char* prefix) {
  static std::atomic<unsigned> counter{0};
  return std::string(prefix) +
         std::to_string((counter++ * 7919u + static_cast<unsigned>(std::time(nullptr))) % 999);
}

Status fill_options(const Json& in, Json* native) {
  Json opts = Json::object();
  if (in.contains("max_tokens") && !in["max_tokens"].is_null()) opts["num_predict"] = in["max_tokens"];
  if (in.contains("max_completion_tokens") && !in["max_completion_tokens"].is_null()) {
    opts["num_predict"] = in["max_completion_tokens"];
  }
  opts["temperature"] =
      in.contains("temperature") && !in["temperature"].is_null() ? in["temperature"] : Json(1.0);
  const bool top_p_set = in.contains("top_p") && in["top_p"].is_number() && in["top_p"].get<double>() != 0;
  opts["top_p"] = top_p_set ? in["top_p"] : Json(1.0);
  for (const char* k : {"seed", "frequency_penalty", "presence_penalty"}) {
    if (in.contains(k) && !in[k].is_null()) opts[k] = in[k];
  }
  if (in.contains("stop") && !in["stop"].is_null()) {
    const Json& stop = in["stop"];
    if (stop.is_string()) {
      opts["stop"] = Json::array({stop});
    } else if (stop.is_array()) {
      for (const Json& s : stop) {
        if (!s.is_string()) return invalid_argument("invalid type for 'stop' field: " + json_excerpt(s));
      }
      opts["stop"] = stop;
    } else {
      return invalid_argument("invalid type for 'stop' field: " + json_excerpt(stop));
    }
  }
  (*native)["options"] = opts;
  if (in.contains("stream") && !in["stream"].is_boolean() && !in["stream"].is_null()) {
    return invalid_argument("invalid type for 'stream' field");
  }
  (*native)["stream"] = in.value("stream", false);
  if (in.contains("model")) (*native)["model"] = in["model"];
  return Status::ok();
}

Result<std::string> image_data(const Json& part) {
  const Json& iu = part["image_url"];
  const std::string url = iu.is_string() ? iu.get<std::string>() : iu.is_object() ? iu.value("url", "") : "";
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) {
    return invalid_argument("image URLs are not currently supported, please use base64 encoded data instead");
  }
  const size_t comma = url.find(";base64,");
  if (url.rfind("data:", 0) != 0 || comma == std::string::npos)
    return invalid_argument("invalid image input");
  return url.substr(comma + 8);
}

Result<Json> translate_messages(const Json& in) {
  if (!in.is_array()) return invalid_argument("invalid message format");
  if (in.empty()) return invalid_argument("[] is too short - 'messages'");
  Json out = Json::array();
  std::map<std::string, std::string> tool_names;  // tool_call_id -> function name
  for (const Json& m : in) {
    if (!m.is_object()) return invalid_argument("invalid message format");
    const std::string role = m.value("role", "");
    Json nm{{"role", role}, {"content", ""}};
    const Json content = m.contains("content") ? m["content"] : Json();
    if (content.is_string()) {
      nm["content"] = content;
    } else if (content.is_array()) {
      std::string text;
      Json images = Json::array();
      for (const Json& part : content) {
        if (!part.is_object()) return invalid_argument("invalid message format");
        const std::string type = part.value("type", "");
        if (type == "text") {
          text += part.value("text", "");
        } else if (type == "image_url") {
          PADDOCK_ASSIGN(std::string data, image_data(part));
          images.push_back(data);
        } else {
          return invalid_argument("invalid message format: unsupported content part \"" + type + "\"");
        }
      }
      nm["content"] = text;
      if (!images.empty()) nm["images"] = images;
    } else if (!content.is_null()) {
      return invalid_argument("invalid message content type");
    } else if (!m.contains("tool_calls")) {
      return invalid_argument("invalid message content type: null");
    }
    if (m.contains("reasoning") && m["reasoning"].is_string()) nm["thinking"] = m["reasoning"];
    if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
      Json calls = Json::array();
      for (const Json& c : m["tool_calls"]) {
        if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) {
          return invalid_argument("invalid tool call");
        }
        const Json& f = c["function"];
        Json args = Json::object();
        if (f.contains("arguments") && f["arguments"].is_string()) {
          const std::string& text = f["arguments"].get_ref<const std::string&>();
          if (json_too_deep(text)) return invalid_argument("invalid tool call arguments: nested too deep");
          args = Json::parse(text, nullptr, false);
          if (args.is_discarded() || !args.is_object())
            return invalid_argument("invalid tool call arguments");
        }
        const std::string name = f.value("name", "");
        if (c.contains("id") && c["id"].is_string()) tool_names[c["id"].get<std::string>()] = name;
        Json call{{"function", Json{{"name", name}, {"arguments", args}}}};
        if (c.contains("id")) call["id"] = c["id"];
        calls.push_back(call);
      }
      nm["tool_calls"] = calls;
    }
    if (m.contains("tool_call_id") && m["tool_call_id"].is_string()) {
      const std::string id = m["tool_call_id"].get<std::string>();
      nm["tool_call_id"] = id;
      if (tool_names.count(id)) nm["tool_name"] = tool_names[id];
    }
    if (m.contains("name") && m["name"].is_string() && role == "tool") nm["tool_name"] = m["name"];
    out.push_back(nm);
  }
  return out;
}

Result<Json> translate_chat(const Json& in) {
  if (!in.is_object()) return invalid_argument("invalid request body");
  Json native = Json::object();
  PADDOCK_TRY(fill_options(in, &native));
  PADDOCK_ASSIGN(native["messages"], translate_messages(in.contains("messages") ? in["messages"] : Json()));
  if (in.contains("tools") && in["tools"].is_array()) native["tools"] = in["tools"];
  if (in.contains("tool_choice")) native["tool_choice"] = in["tool_choice"];  // same form as native
  if (in.contains("response_format") && in["response_format"].is_object()) {
    const Json& rf = in["response_format"];
    const std::string type = rf.value("type", "");
    if (type == "json_object") native["format"] = "json";
    if (type == "json_schema" && rf.contains("json_schema") && rf["json_schema"].is_object() &&
        rf["json_schema"].contains("schema")) {
      native["format"] = rf["json_schema"]["schema"];
    }
  }
  std::string effort;
  if (in.contains("reasoning_effort") && in["reasoning_effort"].is_string()) effort = in["reasoning_effort"];
  if (in.contains("reasoning") && in["reasoning"].is_object() && in["reasoning"].contains("effort") &&
      in["reasoning"]["effort"].is_string()) {
    effort = in["reasoning"]["effort"];
  }
  if (!effort.empty()) {
    PADDOCK_ASSIGN(native["think"], think_for_effort(effort));
  }
  if (in.contains("logprobs") && in["logprobs"].is_boolean()) native["logprobs"] = in["logprobs"];
  if (in.contains("top_logprobs") && in["top_logprobs"].is_number_integer())
    native["top_logprobs"] = in["top_logprobs"];
  return native;
}

// prompt_tokens is the whole prompt; the part served from the KV cache is also reported as
// cached_tokens, as OpenAI does for its prompt cache.
Json usage(const Json& native) {
  const int64_t p = native.value("prompt_eval_count", int64_t{0}), c = native.value("eval_count", int64_t{0});
  return Json{
      {"prompt_tokens", p},
      {"completion_tokens", c},
      {"total_tokens", p + c},
      {"prompt_tokens_details", Json{{"cached_tokens", native.value("prompt_cached_count", int64_t{0})}}}};
}

Json oai_tool_calls(const Json& calls) {
  Json out = Json::array();
  int i = 0;
  for (const Json& c : calls) {
    const Json& f = c["function"];
    out.push_back(
        Json{{"id", c.value("id", "call_" + std::to_string(i))},
             {"index", i},
             {"type", "function"},
             {"function", Json{{"name", f.value("name", "")}, {"arguments", f["arguments"].dump()}}}});
    ++i;
  }
  return out;
}

std::string finish_reason(const Json& native, bool tool_calls) {
  const std::string r = native.value("done_reason", "stop");
  if (tool_calls && r == "stop") return "tool_calls";
  return r == "length" ? "length" : "stop";
}

std::string sse(const Json& j) { return sse_event(j); }

// paddock's extension: a final native object's "truncated" and "prompt_tokens_dropped".
void add_truncation(const Json& native, Json* out) {
  if (!native.contains("prompt_tokens_dropped")) return;
  (*out)["truncated"] = true;
  (*out)["prompt_tokens_dropped"] = native["prompt_tokens_dropped"];
}

// Wraps a native NDJSON stream: each line goes through `convert`, which writes SSE events; a
// native error line becomes an OpenAI error event, and the stream ends with [DONE].
HttpResponse sse_from_ndjson(HttpResponse native, std::function<bool(const Json&, const WriteFn&)> convert) {
  SseRelay relay;
  relay.line = [convert = std::move(convert)](const Json& line, const WriteFn& write) {
    if (!line.contains("error")) return convert(line, write);
    return write(sse(Json{
        {"error",
         Json{{"message", line["error"]}, {"type", "api_error"}, {"param", nullptr}, {"code", nullptr}}}}));
  };
  relay.end = [](const WriteFn& write) { write("data: [DONE]\n\n"); };
  return sse_relay(std::move(native), std::move(relay));
}

}  // namespace

HttpResponse Api::oai_chat(const HttpRequest& http, const PathParams& params) {
  auto body = parse_body(http.body);
  if (!body.ok()) return openai_error_response(400, body.status().message());
  auto native = translate_chat(*body);
  if (!native.ok()) return openai_error_response(http_status(native.status()), native.status().message());
  const bool stream = (*native)["stream"].get<bool>();
  const bool include_usage = body->contains("stream_options") && (*body)["stream_options"].is_object() &&
                             (*body)["stream_options"].value("include_usage", false);
  HttpRequest inner = http;
  inner.body = native->dump();
  inner.report_cached_tokens = true;
  HttpResponse r = chat(inner, params);
  if (r.status != 200) return openai_rewrap_native_error(r);
  const std::string id = make_id("chatcmpl-");
  const std::string model = (*native)["model"].is_string() ? (*native)["model"].get<std::string>() : "";
  const int64_t created = std::time(nullptr);
  if (!stream) {
    const Json n = Json::parse(r.body, nullptr, false);
    const Json& m = n["message"];
    Json msg{{"role", "assistant"}, {"content", m.value("content", "")}};
    if (m.contains("thinking")) msg["reasoning"] = m["thinking"];
    const bool has_calls = m.contains("tool_calls");
    if (has_calls) msg["tool_calls"] = oai_tool_calls(m["tool_calls"]);
    Json choice{{"index", 0}, {"message", msg}, {"finish_reason", finish_reason(n, has_calls)}};
    if (n.contains("logprobs")) choice["logprobs"] = chat_logprobs(n["logprobs"]);
    Json out{{"id", id},         {"object", "chat.completion"},       {"created", created},
             {"model", model},   {"system_fingerprint", "fp_ollama"}, {"choices", Json::array({choice})},
             {"usage", usage(n)}};
    add_truncation(n, &out);
    return with_truncation_header(r, json_response(200, out));
  }
  auto first = std::make_shared<bool>(true);
  auto saw_calls = std::make_shared<bool>(false);
  return sse_from_ndjson(std::move(r), [=](const Json& n, const WriteFn& write) {
    auto chunk = [&](Json delta, Json finish, Json logprobs) {
      Json choice{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}};
      if (!logprobs.is_null()) choice["logprobs"] = std::move(logprobs);
      return Json{{"id", id},
                  {"object", "chat.completion.chunk"},
                  {"created", created},
                  {"model", model},
                  {"system_fingerprint", "fp_ollama"},
                  {"choices", Json::array({std::move(choice)})}};
    };
    // A native line becomes a reasoning delta and/or a content delta; its logprobs ride on
    // the last of them (on an empty delta when the tokens produced no visible text yet).
    const Json& m = n["message"];
    std::vector<Json> deltas;
    if (m.contains("thinking") && !m["thinking"].get<std::string>().empty()) {
      deltas.push_back(Json{{"reasoning", m["thinking"]}});
    }
    const std::string content = m.value("content", "");
    if (!content.empty() || m.contains("tool_calls")) {
      Json delta{{"content", content}};
      if (m.contains("tool_calls")) {
        delta["tool_calls"] = oai_tool_calls(m["tool_calls"]);
        *saw_calls = true;
      }
      deltas.push_back(std::move(delta));
    }
    const Json logprobs = n.contains("logprobs") ? chat_logprobs(n["logprobs"]) : Json();
    if (deltas.empty() && !logprobs.is_null()) deltas.push_back(Json::object());
    for (size_t i = 0; i < deltas.size(); ++i) {
      Json delta = std::move(deltas[i]);
      if (*first) delta["role"] = "assistant";
      *first = false;
      if (!write(sse(chunk(std::move(delta), nullptr, i + 1 == deltas.size() ? logprobs : Json()))))
        return false;
    }
    if (n.value("done", false)) {
      Json last = chunk(Json::object(), finish_reason(n, *saw_calls), Json());
      add_truncation(n, &last);
      if (!write(sse(last))) return false;
      if (include_usage) {
        Json u{{"id", id},         {"object", "chat.completion.chunk"}, {"created", created},
               {"model", model},   {"system_fingerprint", "fp_ollama"}, {"choices", Json::array()},
               {"usage", usage(n)}};
        if (!write(sse(u))) return false;
      }
    }
    return true;
  });
}

HttpResponse Api::oai_completions(const HttpRequest& http, const PathParams& params) {
  auto body = parse_body(http.body);
  if (!body.ok()) return openai_error_response(400, body.status().message());
  if (!body->is_object()) return openai_error_response(400, "invalid request body");
  Json native = Json::object();
  const Status s = fill_options(*body, &native);
  if (!s.is_ok()) return openai_error_response(400, s.message());
  if (body->contains("prompt")) {
    if (!(*body)["prompt"].is_string())
      return openai_error_response(400, "invalid type for 'prompt' field: expected a string");
    native["prompt"] = (*body)["prompt"];
  }
  if (body->contains("suffix") && (*body)["suffix"].is_string()) native["suffix"] = (*body)["suffix"];
  if (body->contains("logprobs") && (*body)["logprobs"].is_number_integer()) {
    native["logprobs"] = true;
    native["top_logprobs"] = (*body)["logprobs"];
  }
  const bool stream = native["stream"].get<bool>();
  const bool include_usage = body->contains("stream_options") && (*body)["stream_options"].is_object() &&
                             (*body)["stream_options"].value("include_usage", false);
  HttpRequest inner = http;
  inner.body = native.dump();
  inner.report_cached_tokens = true;
  HttpResponse r = generate(inner, params);
  if (r.status != 200) return openai_rewrap_native_error(r);
  const std::string id = make_id("cmpl-");
  const std::string model = native.value("model", "");
  const int64_t created = std::time(nullptr);
  // `offset`: where the next token's text starts in the completion (logprobs' text_offset).
  auto object = [=](const Json& n, bool final, int64_t* offset) {
    Json choice{{"text", n.value("response", "")},
                {"index", 0},
                {"finish_reason", final ? Json(finish_reason(n, false)) : Json()}};
    if (n.contains("logprobs")) choice["logprobs"] = completion_logprobs(n["logprobs"], offset);
    return Json{{"id", id},       {"object", "text_completion"},       {"created", created},
                {"model", model}, {"system_fingerprint", "fp_ollama"}, {"choices", Json::array({choice})}};
  };
  if (!stream) {
    const Json n = Json::parse(r.body, nullptr, false);
    int64_t offset = 0;
    Json out = object(n, true, &offset);
    out["usage"] = usage(n);
    add_truncation(n, &out);
    return with_truncation_header(r, json_response(200, out));
  }
  auto offset = std::make_shared<int64_t>(0);
  return sse_from_ndjson(std::move(r), [=](const Json& n, const WriteFn& write) {
    const bool done = n.value("done", false);
    Json out = object(n, done, offset.get());
    if (done) add_truncation(n, &out);
    if (!write(sse(out))) return false;
    if (done && include_usage) {
      Json u{{"id", id},         {"object", "text_completion"},       {"created", created},
             {"model", model},   {"system_fingerprint", "fp_ollama"}, {"choices", Json::array()},
             {"usage", usage(n)}};
      return write(sse(u));
    }
    return true;
  });
}

HttpResponse Api::oai_embeddings(const HttpRequest& http, const PathParams& params) {
  auto body = parse_body(http.body);
  if (!body.ok()) return openai_error_response(400, body.status().message());
  if (!body->is_object()) return openai_error_response(400, "invalid request body");
  Json native{{"model", body->value("model", Json(""))}};
  const Json input = body->contains("input") ? (*body)["input"] : Json();
  if (input.is_string()) {
    native["input"] = Json::array({input});
  } else if (input.is_array() && !input.empty()) {
    native["input"] = input;
  } else {
    return openai_error_response(400, "invalid input");
  }
  if (body->contains("dimensions")) native["dimensions"] = (*body)["dimensions"];
  const std::string encoding = body->value("encoding_format", "float");
  if (encoding != "float" && encoding != "base64") {
    return openai_error_response(
        400, "invalid encoding format: \"" + encoding + "\" (must be \"float\" or \"base64\")");
  }
  HttpRequest inner = http;
  inner.body = native.dump();
  HttpResponse r = embed(inner, params);
  if (r.status != 200) return openai_rewrap_native_error(r);
  const Json n = Json::parse(r.body, nullptr, false);
  Json data = Json::array();
  int index = 0;
  for (const Json& e : n["embeddings"]) {
    Json item{{"object", "embedding"}, {"embedding", e}, {"index", index++}};
    if (encoding == "base64") {
      std::string bytes;
      for (const Json& x : e) {
        const float f = x.get<float>();
        char b[4];
        std::memcpy(b, &f, 4);  // little-endian hosts only (x86-64, arm64)
        bytes.append(b, 4);
      }
      static const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      std::string out;
      for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
        if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
        if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? kB64[(v >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? kB64[v & 63] : '=';
      }
      item["embedding"] = out;
    }
    data.push_back(item);
  }
  const int64_t tokens = n.value("prompt_eval_count", int64_t{0});
  return json_response(200, Json{{"object", "list"},
                                 {"data", data},
                                 {"model", native["model"]},
                                 {"usage", Json{{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
}

namespace {
Json oai_model_object(const store::ModelSummary& m) {
  return Json{{"id", m.name.display_shortest()},
              {"object", "model"},
              {"created", m.modified_unix_ns / 1'000'000'000},
              {"owned_by", m.name.name_space()}};
}
}  // namespace

HttpResponse Api::oai_models(const HttpRequest&, const PathParams&) {
  auto list = store_.list();
  if (!list.ok()) return openai_error_response(500, list.status().message());
  Json data = Json::array();
  for (const auto& m : *list) data.push_back(oai_model_object(m));
  return json_response(200, Json{{"object", "list"}, {"data", data}});
}

HttpResponse Api::oai_model(const HttpRequest&, const PathParams& params) {
  const std::string& id = params.at("model");
  auto name = store::Name::parse(id);
  auto list = store_.list();
  if (name.ok() && list.ok()) {
    for (const auto& m : *list) {
      if (m.name.equal_fold(*name)) return json_response(200, oai_model_object(m));
    }
  }
  return openai_error_response(404, "model '" + id + "' not found");  // Ollama's show message
}

}  // namespace paddock::server
