// OpenAI's Responses API (/v1/responses) over the native chat route: a Responses request
// becomes an /api/chat body (its input items native messages, after the conversation of the
// response it follows), and the native response, or each of its NDJSON chunks, becomes the
// response object and its typed events (response.created ... response.completed, each with a
// sequence_number). Nothing here touches models or the store of past responses, so the unit
// tests drive all of it.
//   PADDOCK_ASSIGN(responses::Request req, responses::to_native_chat(body, history, previous_output));
//   responses::ResponseBuilder b(meta); write(sse(b.start())); write(sse(b.add(native_chunk)));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "server/requests.h"

namespace paddock::server::responses {

struct Request {
  Json native;    // the /api/chat body
  Json messages;  // its messages without the instructions: what a follow-up inherits
  Json echo;      // the request fields a response object repeats (instructions, tools, text, ...)
  bool store = true;
};

// The body's `previous_response_id`, "" when absent. Errors are the client's (400).
Result<std::string> previous_response_id(const Json& body);

// The /api/chat body for a Responses request. A follow-up (previous_response_id) passes the
// previous response's `messages` as `history` and its output items as `previous_output`;
// otherwise both are empty arrays. Errors are the client's (400) and name the field.
Result<Request> to_native_chat(const Json& body, const Json& history, const Json& previous_output);

// What every response object of one request carries.
struct Meta {
  std::string id;  // "resp_..."
  std::string model;
  int64_t created_at = 0;  // Unix seconds
  Json echo;               // Request::echo
};

// Native /api/chat output -> the response object and its events. Output items open as the
// kind of output changes (reasoning, message, one item per function call); each closes before
// the next opens. The non-streamed route feeds the whole native response as one chunk.
class ResponseBuilder {
 public:
  explicit ResponseBuilder(Meta meta);
  std::vector<Json> start();                 // response.created, response.in_progress
  std::vector<Json> add(const Json& chunk);  // item events; on the done chunk response.completed
                                             // (or .incomplete); an {"error"} chunk: response.failed, error
  bool finished() const { return finished_; }
  const Json& response() const { return response_; }  // the snapshot; final once finished()

 private:
  enum class Open { kNone, kReasoning, kText };
  std::vector<Json> open_item(Open kind);
  std::vector<Json> close_item(const std::string& status);
  std::vector<Json> function_call(const Json& call);
  std::vector<Json> finish(const Json& done_chunk);
  std::vector<Json> fail(const std::string& message);
  Json event(const std::string& type, Json fields);

  Json response_;
  Open open_ = Open::kNone;
  std::string open_text_;  // of the open item
  int64_t sequence_ = 0;
  bool finished_ = false;
};

// The events as server-sent events, each named by its type.
std::string sse(const std::vector<Json>& events);

}  // namespace paddock::server::responses
