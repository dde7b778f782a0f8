// The Anthropic Messages routes (POST /v1/messages, /v1/messages/count_tokens), as Ollama
// serves them: translate to the native chat request (anthropic.h), run the native handler,
// translate its JSON or NDJSON back. Both routes count the prompt's tokens the same way, so
// usage.input_tokens is the whole prompt (not only the part the runner had to evaluate, which
// prefix reuse makes as small as one token) and matches count_tokens.
#include <memory>

#include "server/anthropic.h"
#include "server/api.h"
#include "server/inference.h"
#include "server/sse.h"

namespace paddock::server {

namespace {

HttpResponse anthropic_error(const Status& s) {
  return anthropic::error_response(http_status(s), s.message());
}

}  // namespace

Result<int64_t> Api::anthropic_prompt_tokens(const Json& native, const std::function<bool()>& client_gone) {
  const auto t0 = std::chrono::steady_clock::now();
  PADDOCK_ASSIGN(ChatRequest req, parse_chat(native));
  if (req.tool_choice.mode == ToolChoice::Mode::kNone) req.tools.clear();
  PADDOCK_ASSIGN(ResolvedModel model, resolve(req.model));
  // The tokenizer lives in the runner, so counting loads the model as a message would.
  PADDOCK_ASSIGN(Prepared p, prepare(models_, metrics_, model, req, std::nullopt, t0, client_gone));
  if (!req.tools.empty() && !p.tmpl.supports_tools)
    return invalid_argument(model.info.name.display_full() + " does not support tools");
  auto prompt = chat_prompt(p.tmpl, model.info, req);
  if (!prompt.ok()) return internal_error(prompt.status().message());
  PADDOCK_ASSIGN(std::vector<int32_t> tokens, p.lease->runner().tokenize(*prompt));
  return static_cast<int64_t>(tokens.size());
}

HttpResponse Api::anthropic_messages(const HttpRequest& http, const PathParams& params) {
  auto body = parse_body(http.body);
  if (!body.ok()) return anthropic::error_response(400, body.status().message());
  auto native = anthropic::to_native_chat(*body, false);
  if (!native.ok()) return anthropic_error(native.status());
  auto input_tokens = anthropic_prompt_tokens(*native, http.client_gone);
  if (!input_tokens.ok()) return anthropic_error(input_tokens.status());
  HttpRequest inner = http;
  inner.body = native->dump();
  HttpResponse r = chat(inner, params);
  if (r.status != 200) return anthropic::rewrap_native_error(r);
  const std::string id = random_id("msg_");
  const std::string model = (*native)["model"].get<std::string>();
  if (!(*native)["stream"].get<bool>()) {
    return with_truncation_header(
        r, json_response(200, anthropic::message_from_native(Json::parse(r.body), id, model, *input_tokens)));
  }
  auto events = std::make_shared<anthropic::EventStream>(id, model, *input_tokens);
  SseRelay relay;
  relay.begin = [events](const WriteFn& write) { return write(events->start()); };
  relay.line = [events](const Json& line, const WriteFn& write) {
    const std::string out = events->chunk(line);
    return out.empty() || write(out);
  };
  return sse_relay(std::move(r), std::move(relay));
}

HttpResponse Api::anthropic_count_tokens(const HttpRequest& http, const PathParams&) {
  auto body = parse_body(http.body);
  if (!body.ok()) return anthropic::error_response(400, body.status().message());
  auto native = anthropic::to_native_chat(*body, true);
  if (!native.ok()) return anthropic_error(native.status());
  auto input_tokens = anthropic_prompt_tokens(*native, http.client_gone);
  if (!input_tokens.ok()) return anthropic_error(input_tokens.status());
  return json_response(200, Json{{"input_tokens", *input_tokens}});
}

}  // namespace paddock::server
