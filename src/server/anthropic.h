// Anthropic's Messages API (/v1/messages) over the native chat route, as Ollama serves it:
// a Messages request becomes an /api/chat body, the native response (or each NDJSON chunk)
// becomes a message object (or Anthropic's SSE events), and errors take Anthropic's shape.
// Nothing here touches models, so the unit tests and the request fuzzer drive all of it.
//   PADDOCK_ASSIGN(Json native, anthropic::to_native_chat(body, /*count_only=*/false));
//   anthropic::EventStream events(id, model);  write(events.start()); write(events.chunk(line));
#pragma once

#include <string>

#include "base/status.h"
#include "server/http_types.h"
#include "server/requests.h"

namespace paddock::server::anthropic {

// The /api/chat body for a Messages request. `count_only` (count_tokens) drops the need for
// max_tokens. Errors are the client's (400), with Anthropic-style messages naming the field.
Result<Json> to_native_chat(const Json& body, bool count_only);

// The message object for a finished (non-streamed) native /api/chat response.
// `input_tokens`: the whole prompt's tokens (usage.input_tokens).
Json message_from_native(const Json& native, const std::string& id, const std::string& model,
                         int64_t input_tokens);

// end_turn | max_tokens | tool_use | stop_sequence, from the native done_reason and
// stop_sequence (paddock's field naming the stop string that ended the output).
std::string stop_reason(const Json& native_final, bool called_tools);
// The native final chunk's stop_sequence, else null.
Json stop_sequence(const Json& native_final);

// Native NDJSON chunks -> Anthropic's SSE events. Content blocks open as the kind of output
// changes (thinking, text, one block per tool call) and each closes before the next opens.
class EventStream {
 public:
  EventStream(std::string id, std::string model, int64_t input_tokens);
  std::string start();                  // message_start, ping
  std::string chunk(const Json& line);  // deltas; on the done chunk also message_delta and message_stop
  static std::string error(const std::string& message);  // an `error` event (api_error)

 private:
  enum class Block { kNone, kThinking, kText };
  std::string open_block(Block kind);
  std::string close_block();

  std::string id_, model_;
  int64_t input_tokens_;
  Block open_ = Block::kNone;
  int index_ = -1;  // of the last block opened
  bool called_tools_ = false;
};

// {"type":"error","error":{"type": <from the status>, "message"}}.
HttpResponse error_response(int status, const std::string& message);
// A native {"error": "..."} response in Anthropic's shape, with its status.
HttpResponse rewrap_native_error(const HttpResponse& native);

}  // namespace paddock::server::anthropic
