#include "server/requests.h"

#include <cstdint>

#include "base/json_depth.h"
#include "server/go_json_error.h"

namespace paddock::server {

namespace {

const char* json_kind(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "bool";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    case Json::value_t::null: return "null";
    default: return "number";
  }
}

Status type_error(const Json& v, std::string_view field, std::string_view want) {
  return invalid_argument("json: cannot unmarshal " + std::string(json_kind(v)) + " into Go struct field ." +
                          std::string(field) + " of type " + std::string(want));
}

// Each reader leaves `out` untouched when the key is absent or null (Go's zero value stays).
Status read(const Json& j, const char* key, std::string* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  if (!it->is_string()) return type_error(*it, key, "string");
  *out = it->get<std::string>();
  return Status::ok();
}

Status read(const Json& j, const char* key, std::optional<std::string>* out) {
  std::string s;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  PADDOCK_TRY(read(j, key, &s));
  *out = std::move(s);
  return Status::ok();
}

Status read(const Json& j, const char* key, bool* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  if (!it->is_boolean()) return type_error(*it, key, "bool");
  *out = it->get<bool>();
  return Status::ok();
}

Status read_int(const Json& j, const char* key, int64_t lo, int64_t hi, int64_t* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  if (!it->is_number_integer()) return type_error(*it, key, "int");
  const int64_t v = it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                        ? INT64_MAX
                        : it->get<int64_t>();
  if (v < lo || v > hi) return type_error(*it, key, "int");
  *out = v;
  return Status::ok();
}

Status read(const Json& j, const char* key, std::vector<std::string>* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  if (!it->is_array()) return type_error(*it, key, "[]string");
  for (const Json& e : *it) {
    if (!e.is_string()) return type_error(e, key, "string");
    out->push_back(e.get<std::string>());
  }
  return Status::ok();
}

Status read_object(const Json& j, const char* key, Json* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  if (!it->is_object()) return type_error(*it, key, "map[string]interface {}");
  *out = *it;
  return Status::ok();
}

Status read_keep_alive(const Json& j, std::optional<Duration>* out) {
  const auto it = j.find("keep_alive");
  if (it == j.end()) return Status::ok();
  auto ka = parse_keep_alive(nlohmann::json::parse(it->dump()));
  if (!ka.ok()) return ka.status();
  *out = *ka;
  return Status::ok();
}

// {"budget": N}, N a non-negative integer (thinking tokens) and no other key.
Status read_think_budget(const Json& think, Think* out) {
  for (const auto& item : think.items()) {
    if (item.key() != "budget")
      return invalid_argument("invalid think value: unknown key " + json_excerpt(Json(item.key())) +
                              " (expected {\"budget\": N})");
  }
  const auto b = think.find("budget");
  if (b == think.end())
    return invalid_argument("invalid think value: expected {\"budget\": N}, found no budget");
  const bool ok = b->is_number_unsigned() ? b->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)
                                          : b->is_number_integer() && b->get<int64_t>() >= 0;
  if (!ok)
    return invalid_argument("invalid think budget: " + json_excerpt(*b) +
                            " (must be an integer of at least 0)");
  *out = Think{true, true, "", b->get<int64_t>()};
  return Status::ok();
}

Status read_think(const Json& j, Think* out) {
  const auto it = j.find("think");
  if (it == j.end() || it->is_null()) return Status::ok();
  if (it->is_boolean()) {
    *out = Think{true, it->get<bool>(), ""};
    return Status::ok();
  }
  if (it->is_string()) {
    const std::string s = it->get<std::string>();
    if (s == "low" || s == "medium" || s == "high" || s == "max") {
      *out = Think{true, true, s};
      return Status::ok();
    }
    if (s == "true" || s == "false") {
      *out = Think{true, s == "true", ""};
      return Status::ok();
    }
  }
  if (it->is_object()) return read_think_budget(*it, out);
  return invalid_argument(
      "invalid think value: " + json_excerpt(*it) +
      " (must be \"high\", \"medium\", \"low\", \"max\", true, false, or {\"budget\": N})");
}

Status read_format(const Json& j, Json* out) {
  const auto it = j.find("format");
  if (it == j.end() || it->is_null()) return Status::ok();
  if (it->is_string() && (it->get<std::string>() == "json" || it->get<std::string>().empty())) {
    if (!it->get<std::string>().empty()) *out = *it;
    return Status::ok();
  }
  if (it->is_object()) {
    *out = *it;
    return Status::ok();
  }
  return invalid_argument("invalid format: " + json_excerpt(*it) +
                          "; expected \"json\" or a valid JSON Schema object");
}

Status read_common(const Json& j, InferenceCommon* c) {
  PADDOCK_TRY(read(j, "model", &c->model));
  PADDOCK_TRY(read_object(j, "options", &c->options));
  PADDOCK_TRY(read_keep_alive(j, &c->keep_alive));
  PADDOCK_TRY(read_format(j, &c->format));
  PADDOCK_TRY(read(j, "stream", &c->stream));
  PADDOCK_TRY(read_think(j, &c->think));
  PADDOCK_TRY(read(j, "logprobs", &c->logprobs));
  int64_t top = 0;
  PADDOCK_TRY(read_int(j, "top_logprobs", INT32_MIN, INT32_MAX, &top));
  if (top < 0 || top > 20) return invalid_argument("top_logprobs must be between 0 and 20");
  c->top_logprobs = static_cast<int>(top);
  PADDOCK_TRY(read(j, "truncate", &c->truncate));
  return Status::ok();
}

Status require_object(const Json& j) {
  if (!j.is_object())
    return invalid_argument("json: cannot unmarshal " + std::string(json_kind(j)) +
                            " into Go value of type api.Request");
  return Status::ok();
}

Status read_name(const Json& j, std::string* out) {
  PADDOCK_TRY(read(j, "model", out));
  if (out->empty()) PADDOCK_TRY(read(j, "name", out));
  return Status::ok();
}

Status read_digest_map(const Json& j, const char* key, std::map<std::string, std::string>* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::ok();
  if (!it->is_object()) return type_error(*it, key, "map[string]string");
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) return type_error(v, key, "string");
    (*out)[k] = v.get<std::string>();
  }
  return Status::ok();
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag and without the
// "; last read: '...'" part, which quotes the input (a 30 MB string literal, all of it).
std::string short_parse_error(const std::string& what) {
  std::string m = what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2);
  const size_t last_read = m.find("; last read: ");
  if (last_read == std::string::npos) return m;
  // The parser's own "; expected ';'" comes last and is short; a longer one is in the quote.
  const size_t expected = m.rfind("; expected ");
  const bool has_expected =
      expected != std::string::npos && expected > last_read && m.size() - expected <= 48;
  const std::string tail = has_expected ? m.substr(expected) : "";
  return m.substr(0, last_read) + tail;
}

Status read_tool_choice(const Json& j, const std::vector<chat::Tool>& tools, ToolChoice* out) {
  const auto it = j.find("tool_choice");
  if (it == j.end() || it->is_null()) return Status::ok();
  using Mode = ToolChoice::Mode;
  if (it->is_string()) {
    const std::string s = it->get<std::string>();
    if (s == "auto" || s == "none" || s == "required") {
      out->mode = s == "auto" ? Mode::kAuto : s == "none" ? Mode::kNone : Mode::kRequired;
      return Status::ok();
    }
  } else if (it->is_object() && it->value("type", Json()) == "function" && it->contains("function") &&
             (*it)["function"].is_object() && (*it)["function"].contains("name") &&
             (*it)["function"]["name"].is_string()) {
    out->mode = Mode::kNamed;
    out->name = (*it)["function"]["name"].get<std::string>();
    for (const chat::Tool& t : tools) {
      if (t.name == out->name) return Status::ok();
    }
    return invalid_argument("tool_choice names \"" + out->name +
                            "\", which is not among the request's tools");
  }
  return invalid_argument(
      "invalid tool_choice: " + json_excerpt(*it) +
      R"( (must be "auto", "none", "required" or {"type":"function","function":{"name":...}}))");
}

}  // namespace

std::string json_excerpt(const Json& v) {
  constexpr size_t kMaxExcerpt = 64;
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() <= kMaxExcerpt) return s;
  size_t n = kMaxExcerpt;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

Result<Json> parse_body(std::string_view body) {
  if (body.empty()) return invalid_argument("missing request body");
  if (json_too_deep(body)) {
    return invalid_argument("invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    return Json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    // Ollama's words (Go's encoding/json); what only nlohmann refuses (invalid UTF-8) keeps its own.
    std::string go = go_json_syntax_error(body);
    return invalid_argument(go.empty() ? "invalid JSON: " + short_parse_error(e.what()) : std::move(go));
  } catch (const nlohmann::json::out_of_range&) {
    // A number beyond a double's range ("1e400"); the library's message quotes all its digits.
    return invalid_argument("invalid JSON: a number is out of range");
  }
}

Result<GenerateRequest> parse_generate(const Json& j) {
  PADDOCK_TRY(require_object(j));
  GenerateRequest r;
  PADDOCK_TRY(read_common(j, &r));
  PADDOCK_TRY(read(j, "prompt", &r.prompt));
  PADDOCK_TRY(read(j, "suffix", &r.suffix));
  PADDOCK_TRY(read(j, "system", &r.system));
  PADDOCK_TRY(read(j, "template", &r.template_text));
  PADDOCK_TRY(read(j, "images", &r.images));
  PADDOCK_TRY(read(j, "raw", &r.raw));
  if (const auto it = j.find("context"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return type_error(*it, "context", "[]int");
    for (const Json& t : *it) {
      if (!t.is_number_integer() || t.get<int64_t>() < INT32_MIN || t.get<int64_t>() > INT32_MAX) {
        return type_error(t, "context", "int");
      }
      r.context.push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
  }
  if (r.raw && (r.template_text || r.system || !r.context.empty())) {
    return invalid_argument("raw mode does not support template, system, or context");
  }
  return r;
}

Result<ChatRequest> parse_chat(const Json& j) {
  PADDOCK_TRY(require_object(j));
  ChatRequest r;
  PADDOCK_TRY(read_common(j, &r));
  if (const auto it = j.find("messages"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return type_error(*it, "messages", "[]api.Message");
    PADDOCK_ASSIGN(r.messages, chat::messages_from_json(*it));
  }
  if (const auto it = j.find("tools"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return type_error(*it, "tools", "api.Tools");
    PADDOCK_ASSIGN(r.tools, chat::tools_from_json(*it));
  }
  PADDOCK_TRY(read_tool_choice(j, r.tools, &r.tool_choice));
  if (r.tool_choice.mode == ToolChoice::Mode::kRequired && r.tools.empty())
    return invalid_argument("tool_choice \"required\" needs at least one tool");
  return r;
}

Result<EmbedRequest> parse_embed(const Json& j) {
  PADDOCK_TRY(require_object(j));
  EmbedRequest r;
  PADDOCK_TRY(read(j, "model", &r.model));
  PADDOCK_TRY(read(j, "truncate", &r.truncate));
  PADDOCK_TRY(read_int(j, "dimensions", 0, INT32_MAX, &r.dimensions));
  PADDOCK_TRY(read_object(j, "options", &r.options));
  PADDOCK_TRY(read_keep_alive(j, &r.keep_alive));
  if (const auto it = j.find("input"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      if (!it->get<std::string>().empty()) r.inputs.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      for (const Json& e : *it) {
        if (!e.is_string()) return invalid_argument("invalid input type");
        r.inputs.push_back(e.get<std::string>());
      }
    } else {
      return invalid_argument("invalid input type");
    }
  }
  return r;
}

Result<EmbeddingsRequest> parse_embeddings(const Json& j) {
  PADDOCK_TRY(require_object(j));
  EmbeddingsRequest r;
  PADDOCK_TRY(read(j, "model", &r.model));
  PADDOCK_TRY(read(j, "prompt", &r.prompt));
  PADDOCK_TRY(read_object(j, "options", &r.options));
  PADDOCK_TRY(read_keep_alive(j, &r.keep_alive));
  return r;
}

Result<ModelRequest> parse_model_request(const Json& j) {
  PADDOCK_TRY(require_object(j));
  ModelRequest r;
  PADDOCK_TRY(read_name(j, &r.model));
  PADDOCK_TRY(read(j, "verbose", &r.verbose));
  PADDOCK_TRY(read(j, "stream", &r.stream));
  PADDOCK_TRY(read(j, "insecure", &r.insecure));
  return r;
}

Result<CopyRequest> parse_copy(const Json& j) {
  PADDOCK_TRY(require_object(j));
  CopyRequest r;
  PADDOCK_TRY(read(j, "source", &r.source));
  PADDOCK_TRY(read(j, "destination", &r.destination));
  return r;
}

Result<CreateRequest> parse_create(const Json& j) {
  PADDOCK_TRY(require_object(j));
  CreateRequest r;
  PADDOCK_TRY(read_name(j, &r.model));
  PADDOCK_TRY(read(j, "from", &r.from));
  PADDOCK_TRY(read(j, "quantize", &r.quantize));
  if (r.quantize.empty()) PADDOCK_TRY(read(j, "quantization", &r.quantize));
  r.has_template = j.contains("template") && !j["template"].is_null();
  r.has_system = j.contains("system") && !j["system"].is_null();
  PADDOCK_TRY(read(j, "template", &r.template_text));
  PADDOCK_TRY(read(j, "system", &r.system));
  PADDOCK_TRY(read_digest_map(j, "files", &r.files));
  PADDOCK_TRY(read_digest_map(j, "adapters", &r.adapters));
  if (const auto it = j.find("license"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      r.license.push_back(it->get<std::string>());
    } else {
      PADDOCK_TRY(read(j, "license", &r.license));
    }
  }
  PADDOCK_TRY(read_object(j, "parameters", &r.parameters));
  if (const auto it = j.find("messages"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return type_error(*it, "messages", "[]api.Message");
    r.messages = *it;
  }
  PADDOCK_TRY(read(j, "stream", &r.stream));
  return r;
}

}  // namespace paddock::server
