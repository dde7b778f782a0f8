// Request bodies of every route, decoded and type-checked the way Ollama's Go structs
// decode them: unknown fields ignored, a field of the wrong JSON type is a 400 whose message
// names the field ("json: cannot unmarshal number into Go struct field .prompt of type
// string"), an empty body is "missing request body". Nothing here touches models or
// files, so the fuzzer drives all of it.
//   PADDOCK_ASSIGN(GenerateRequest r, parse_generate(body));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "chat/message.h"
#include "server/duration.h"

namespace paddock::server {

using Json = nlohmann::ordered_json;

// `think`: unset, a bool, a level ("low" | "medium" | "high" | "max"), or (paddock's
// extension) {"budget": N}: thinking on, closed by the runner after N thinking tokens.
struct Think {
  bool set = false;
  bool enabled = false;
  std::string level;
  int64_t budget = -1;  // thinking tokens allowed; -1 = no limit
};

// Fields shared by the inference routes.
struct InferenceCommon {
  std::string model;
  Json options = Json::object();
  std::optional<Duration> keep_alive;
  Json format;  // null, "json" or a schema object
  bool stream = true;
  Think think;
  bool logprobs = false;
  int top_logprobs = 0;
  bool truncate = true;  // false: a prompt longer than num_ctx is a 400 instead of being cut
};

struct GenerateRequest : InferenceCommon {
  std::string prompt, suffix;
  std::optional<std::string> system, template_text;
  std::vector<std::string> images;
  std::vector<int32_t> context;
  bool raw = false;
};

// `tool_choice` (an extension of /api/chat; OpenAI's form): "auto", "none", "required", or
// {"type":"function","function":{"name":"..."}} for one named tool.
struct ToolChoice {
  enum class Mode { kAuto, kNone, kRequired, kNamed };
  Mode mode = Mode::kAuto;
  std::string name;  // kNamed: a tool of the request
};

struct ChatRequest : InferenceCommon {
  std::vector<chat::Message> messages;
  std::vector<chat::Tool> tools;
  ToolChoice tool_choice;
};

struct EmbedRequest {
  std::string model;
  std::vector<std::string> inputs;
  bool truncate = true;
  int64_t dimensions = 0;
  Json options = Json::object();
  std::optional<Duration> keep_alive;
};

struct EmbeddingsRequest {
  std::string model, prompt;
  Json options = Json::object();
  std::optional<Duration> keep_alive;
};

struct ModelRequest {  // show, delete, pull, push
  std::string model;
  bool verbose = false;
  bool stream = true;
  bool insecure = false;
};

struct CopyRequest {
  std::string source, destination;
};

struct CreateRequest {
  std::string model, from, quantize, template_text, system;
  bool has_template = false, has_system = false;
  std::map<std::string, std::string> files, adapters;
  std::vector<std::string> license;
  Json parameters = Json::object();
  Json messages = Json::array();
  bool stream = true;
};

// The body as JSON: empty -> "missing request body"; nested deeper than kMaxJsonDepth
// (base/json_depth.h) or malformed -> a short message that does not quote the body.
Result<Json> parse_body(std::string_view body);

// `v` for an error message: its JSON text, cut to a few dozen bytes.
std::string json_excerpt(const Json& v);

Result<GenerateRequest> parse_generate(const Json& j);
Result<ChatRequest> parse_chat(const Json& j);
Result<EmbedRequest> parse_embed(const Json& j);
Result<EmbeddingsRequest> parse_embeddings(const Json& j);
Result<ModelRequest> parse_model_request(const Json& j);  // "model", or the legacy "name"
Result<CopyRequest> parse_copy(const Json& j);
Result<CreateRequest> parse_create(const Json& j);

}  // namespace paddock::server
