// Server-sent events made from a native NDJSON stream: the OpenAI and Anthropic routes run the
// native handler and re-stream each of its lines, translated, as SSE.
// Invariant: `line` sees every parsed line in order (a mid-stream {"error": ...} line too);
// once a callback returns false (the client is gone) nothing more is written or called. The
// native response's headers are kept.
//   return sse_relay(std::move(native), {.line = [](const Json& j, const WriteFn& w) { ... }});
#pragma once

#include <functional>
#include <string>

#include "server/http_types.h"
#include "server/requests.h"

namespace paddock::server {

struct SseRelay {
  std::function<bool(const WriteFn&)> begin;              // before the first line; may be empty
  std::function<bool(const Json&, const WriteFn&)> line;  // each native line
  std::function<void(const WriteFn&)> end;                // after the last line; may be empty
};

HttpResponse sse_relay(HttpResponse native, SseRelay relay);

// "data: {...}\n\n", or with an event name "event: NAME\ndata: {...}\n\n".
std::string sse_event(const Json& data, const std::string& event = "");

}  // namespace paddock::server
