// The OpenAI Responses routes (POST /v1/responses, GET /v1/responses/:id): translate to the
// native chat request (responses.h), run the native handler, translate its JSON or NDJSON back
// (streamed as the typed SSE events). Answers with `store` (the default) are kept in memory
// (response_store.h), so a follow-up naming one as previous_response_id continues its
// conversation and GET returns it.
#include <ctime>
#include <memory>

#include "server/api.h"
#include "server/api_util.h"
#include "server/responses.h"
#include "server/sse.h"

namespace paddock::server {

namespace {

HttpResponse openai_error(const Status& s) { return openai_error_response(http_status(s), s.message()); }

}  // namespace

HttpResponse Api::responses_create(const HttpRequest& http, const PathParams& params) {
  auto body = parse_body(http.body);
  if (!body.ok()) return openai_error_response(400, body.status().message());
  auto previous_id = responses::previous_response_id(*body);
  if (!previous_id.ok()) return openai_error(previous_id.status());
  Json history = Json::array(), previous_output = Json::array();
  if (!previous_id->empty()) {
    auto found = responses_.get(*previous_id, ResponseStore::Clock::now());
    if (!found)
      return openai_error_response(404, "Previous response with id '" + *previous_id + "' not found.");
    history = std::move(found->messages);
    previous_output = std::move(found->response["output"]);
  }
  auto req = responses::to_native_chat(*body, history, previous_output);
  if (!req.ok()) return openai_error(req.status());
  HttpRequest inner = http;
  inner.body = req->native.dump();
  inner.report_cached_tokens = true;
  HttpResponse r = chat(inner, params);
  if (r.status != 200) return openai_rewrap_native_error(r);

  const responses::Meta meta{.id = random_id("resp_"),
                             .model = req->native["model"].get<std::string>(),
                             .created_at = static_cast<int64_t>(std::time(nullptr)),
                             .echo = req->echo};
  auto builder = std::make_shared<responses::ResponseBuilder>(meta);
  // Kept once finished, unless it failed or the client asked not to.
  auto keep = [this, store = req->store, messages = req->messages, id = meta.id](const Json& response) {
    if (store && response["status"] != "failed")
      responses_.put(id, {response, messages}, ResponseStore::Clock::now());
  };
  if (!req->native["stream"].get<bool>()) {
    builder->add(Json::parse(r.body));
    keep(builder->response());
    return with_truncation_header(r, json_response(200, builder->response()));
  }
  SseRelay relay;
  relay.begin = [builder](const WriteFn& write) { return write(responses::sse(builder->start())); };
  relay.line = [builder, keep](const Json& line, const WriteFn& write) {
    const bool was_finished = builder->finished();
    const std::string out = responses::sse(builder->add(line));
    if (!was_finished && builder->finished()) keep(builder->response());
    return out.empty() || write(out);
  };
  return sse_relay(std::move(r), std::move(relay));
}

HttpResponse Api::responses_get(const HttpRequest&, const PathParams& params) {
  const std::string& id = params.at("id");
  auto found = responses_.get(id, ResponseStore::Clock::now());
  if (!found) return openai_error_response(404, "Response with id '" + id + "' not found.");
  return json_response(200, found->response);
}

}  // namespace paddock::server
