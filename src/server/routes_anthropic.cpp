// The Anthropic Messages routes (POST /v1/messages, /v1/messages/count_tokens), as Ollama
// serves them: translate to the native chat request (anthropic.h), run the native handler,
// translate its JSON or NDJSON back. count_tokens renders the same prompt and tokenizes it.
#include <memory>

#include "server/anthropic.h"
#include "server/api.h"
#include "server/inference.h"
#include "server/sse.h"

namespace paddock::server {

HttpResponse Api::anthropic_messages(const HttpRequest& http, const PathParams& params) {
  auto body = parse_body(http.body);
  if (!body.ok()) return anthropic::error_response(400, body.status().message());
  auto native = anthropic::to_native_chat(*body, false);
  if (!native.ok()) return anthropic::error_response(http_status(native.status()), native.status().message());
  HttpRequest inner = http;
  inner.body = native->dump();
  HttpResponse r = chat(inner, params);
  if (r.status != 200) return anthropic::rewrap_native_error(r);
  const std::string id = anthropic::random_id("msg_");
  const std::string model = (*native)["model"].get<std::string>();
  if (!(*native)["stream"].get<bool>()) {
    return json_response(200, anthropic::message_from_native(Json::parse(r.body), id, model));
  }
  auto events = std::make_shared<anthropic::EventStream>(id, model);
  SseRelay relay;
  relay.begin = [events](const WriteFn& write) { return write(events->start()); };
  relay.line = [events](const Json& line, const WriteFn& write) {
    const std::string out = events->chunk(line);
    return out.empty() || write(out);
  };
  return sse_relay(std::move(r), std::move(relay));
}

HttpResponse Api::anthropic_count_tokens(const HttpRequest& http, const PathParams&) {
  const auto t0 = std::chrono::steady_clock::now();
  auto body = parse_body(http.body);
  if (!body.ok()) return anthropic::error_response(400, body.status().message());
  auto native = anthropic::to_native_chat(*body, true);
  if (!native.ok()) return anthropic::error_response(http_status(native.status()), native.status().message());
  auto req = parse_chat(*native);
  if (!req.ok()) return anthropic::error_response(http_status(req.status()), req.status().message());
  if (req->tool_choice.mode == ToolChoice::Mode::kNone) req->tools.clear();
  auto model = resolve(req->model);
  if (!model.ok()) return anthropic::error_response(http_status(model.status()), model.status().message());
  // The tokenizer lives in the runner, so counting loads the model as a message would.
  auto p = prepare(models_, *model, *req, std::nullopt, t0, http.client_gone);
  if (!p.ok()) return anthropic::error_response(http_status(p.status()), p.status().message());
  if (!req->tools.empty() && !p->tmpl.supports_tools)
    return anthropic::error_response(400, model->key.name + " does not support tools");
  auto prompt = chat_prompt(p->tmpl, model->info, *req);
  if (!prompt.ok()) return anthropic::error_response(500, prompt.status().message());
  auto tokens = p->lease->runner().tokenize(*prompt);
  if (!tokens.ok()) return anthropic::error_response(500, tokens.status().message());
  return json_response(200, Json{{"input_tokens", tokens->size()}});
}

}  // namespace paddock::server
