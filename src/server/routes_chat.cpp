// POST /api/chat: messages (+ model SYSTEM and MESSAGE history), tools, thinking.
#include <memory>

#include "server/api.h"
#include "server/inference.h"
#include "server/model_info.h"
#include "server/tool_choice.h"

namespace paddock::server {

HttpResponse Api::chat(const HttpRequest& http, const PathParams&) {
  const auto t0 = std::chrono::steady_clock::now();
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_chat(*body);
  if (!req.ok()) return error_response(req.status());
  if (req->model.empty()) return error_response(400, "model is required");
  if (req->tool_choice.mode == ToolChoice::Mode::kNone) req->tools.clear();  // the model never sees them
  auto model = resolve(req->model);
  if (!model.ok()) return error_response(model.status());
  if (is_embedding_model(model->info.model_path)) {
    return error_response(400, "\"" + req->model + "\" does not support chat");
  }
  for (const chat::Message& m : req->messages) {
    if (!m.images.empty() && model->info.projector_paths.empty()) {
      return error_response(
          400, "\"" + req->model + "\" does not support images: the model has no vision projector");
    }
  }

  const bool unload = req->keep_alive && req->keep_alive->count() == 0;
  if (req->messages.empty() && unload) {
    // Answered at once, as Ollama does: the model unloads when its running requests end.
    models_.unload(model->key.name);
    return json_response(200, Json{{"model", req->model},
                                   {"created_at", now_rfc3339()},
                                   {"message", Json{{"role", "assistant"}, {"content", ""}}},
                                   {"done", true},
                                   {"done_reason", "unload"}});
  }

  auto prepared = prepare(models_, metrics_, *model, *req, std::nullopt, t0, http.client_gone);
  if (!prepared.ok()) return error_response(prepared.status());
  auto p = std::make_shared<Prepared>(std::move(prepared).value());
  if (!req->tools.empty() && !p->tmpl.supports_tools) {
    return error_response(400, model->info.name.display_full() + " does not support tools");  // as Ollama
  }

  if (req->messages.empty()) {
    return json_response(200, Json{{"model", req->model},
                                   {"created_at", now_rfc3339()},
                                   {"message", Json{{"role", "assistant"}, {"content", ""}}},
                                   {"done", true},
                                   {"done_reason", "load"}});
  }

  auto prompt = fit_chat_prompt(*p, model->info, *req);
  if (!prompt.ok()) return error_response(prompt.status());

  auto spec = std::make_shared<GenerationSpec>();
  spec->request = completion_request(*p, *req, prompt->text, http.client_gone);
  spec->dropped_tokens = prompt->dropped_tokens;
  set_thinking(p->tmpl, req->think, prompt->text, spec.get());
  auto forced = forced_tool_call_grammar(p->tmpl, *req, spec->prompt_opens_thinking);
  if (!forced.ok()) return error_response(forced.status());
  if (!forced->empty()) {
    spec->request.grammar = std::move(forced).value();
    spec->request.format.clear();  // the answer is the call, whose arguments have their own schema
    spec->request.thinking_budget.reset();  // the grammar closes any open thinking itself
  }
  spec->parse_tools = !req->tools.empty();
  spec->tool_tag = p->tmpl.tool_tag;
  for (const chat::Tool& t : req->tools) spec->tool_names.push_back(t.name);
  const std::string name = req->model;
  const bool cached = http.report_cached_tokens;

  auto run = [p, spec, name, cached](const SendFn& send) -> Status {
    return run_prepared(*p, *spec, [&](const GenerationEvent& e) {
      chat::Message m{.role = "assistant", .content = e.content, .thinking = e.thinking};
      m.tool_calls = e.tool_calls;
      Json msg = chat::to_json(m);
      msg["content"] = e.content;  // always present, as Ollama's chunks have it
      Json out{{"model", name}, {"created_at", now_rfc3339()}, {"message", msg}};
      if (!e.logprobs.empty()) out["logprobs"] = logprobs_json(e.logprobs);
      out["done"] = e.done;
      if (e.done) {
        out["done_reason"] = e.final.done_reason.empty() ? "stop" : e.final.done_reason;
        add_metrics(*p, e.final, cached, &out);
        add_truncation(*spec, e.final, &out);
        if (!e.final.stop_sequence.empty()) out["stop_sequence"] = e.final.stop_sequence;
      }
      return send(out);
    });
  };

  if (req->stream) {
    // Whole messages are dropped before the stream starts; a cut by the runner shows on the last line.
    HttpResponse r = ndjson_stream(run, http);
    set_truncation_header(spec->dropped_tokens, &r);
    return r;
  }

  Json total;
  std::string content, thinking;
  Json calls = Json::array();
  Json lps = Json::array();
  const Status s = run([&](const Json& chunk) {
    const Json& m = chunk["message"];
    content += m.value("content", "");
    thinking += m.value("thinking", "");
    if (m.contains("tool_calls")) {
      for (const auto& c : m["tool_calls"]) calls.push_back(c);
    }
    if (chunk.contains("logprobs")) {
      for (const auto& lp : chunk["logprobs"]) lps.push_back(lp);
    }
    if (chunk.value("done", false)) total = chunk;
    return true;
  });
  if (!s.is_ok()) return error_response(s);
  Json msg{{"role", "assistant"}, {"content", content}};
  if (!thinking.empty()) msg["thinking"] = thinking;
  if (!calls.empty()) msg["tool_calls"] = calls;
  total["message"] = msg;
  if (!lps.empty()) total["logprobs"] = lps;
  HttpResponse r = json_response(200, total);
  set_truncation_header(total.value("prompt_tokens_dropped", int64_t{0}), &r);
  return r;
}

}  // namespace paddock::server
