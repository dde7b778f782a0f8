// Small helpers shared by the route files: JSON/error responses, Status -> HTTP status,
// RFC3339Nano timestamps, and the resolved-model bundle the inference routes use.
// Every error message a client sees goes through public_message (docs/security.md): short,
// and without absolute paths.
//   return error_response(404, "model \"x\" not found, try pulling it first");
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"
#include "server/http_types.h"
#include "server/scheduler.h"
#include "server/requests.h"
#include "store/store.h"

namespace paddock::server {

struct ResolvedModel {
  store::ModelInfo info;
  ModelIdentity key;  // what the scheduler and /api/ps show
};

// Every request's answer once shutdown has begun (503, or a stream's last line).
inline constexpr const char* kShuttingDownMessage = "server is shutting down";

// Longer messages are cut (at a UTF-8 boundary) and end in "...".
inline constexpr size_t kMaxErrorBytes = 512;

// `message` as a client may see it: each absolute path shortened to its last component (store
// and temp paths name the user's home and the store's layout), then at most kMaxErrorBytes.
std::string public_message(std::string_view message);

HttpResponse json_response(int status, const Json& body);
// For the translated APIs (Anthropic, Responses): j[key] unless it is missing or null, and
// the 400 that names a bad field ("messages[2].content: expected a string").
const Json* field(const Json& j, const char* key);
Status field_error(const std::string& field, const std::string& what);
// Ollama's {"error": "..."}.
HttpResponse error_response(int status, const std::string& message);
// OpenAI's {"error": {"message", "type", "param", "code"}}; the type follows the status.
HttpResponse openai_error_response(int status, const std::string& message);
// A native {"error": "..."} response in OpenAI's shape, with its status.
HttpResponse openai_rewrap_native_error(const HttpResponse& native);
// kInvalidArgument -> 400, kNotFound -> 404, kCancelled -> 499, kUnavailable -> 503, else 500.
int http_status(const Status& s);
HttpResponse error_response(const Status& s);

// X-Paddock-Truncated: the prompt tokens dropped to fit the context, set on `r` when `dropped`
// > 0; a translating route (OpenAI, Anthropic, Responses) passes the native response's on.
inline constexpr char kTruncatedHeader[] = "X-Paddock-Truncated";
void set_truncation_header(int64_t dropped, HttpResponse* r);
HttpResponse with_truncation_header(const HttpResponse& native, HttpResponse out);

// Go's time.RFC3339Nano in UTC ("2024-05-01T12:00:00.123456789Z").
std::string rfc3339_nano(std::chrono::system_clock::time_point t);
std::string now_rfc3339();
int64_t ns_since(std::chrono::steady_clock::time_point t0);

// OpenAI's `reasoning.effort` / `reasoning_effort` as the native `think` value: "none" -> false,
// "minimal" -> "low", "xhigh" -> "max"; anything unknown is the client's error.
Result<Json> think_for_effort(const std::string& effort);

// `prefix` + 24 random base-62 characters ("msg_...", "resp_...").
std::string random_id(const std::string& prefix);

inline constexpr const char* kNdjson = "application/x-ndjson";

}  // namespace paddock::server
