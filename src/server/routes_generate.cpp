// POST /api/generate: completion, load (empty prompt) and unload (empty prompt, keep_alive 0).
#include <memory>

#include "server/api.h"
#include "server/inference.h"
#include "server/model_info.h"

namespace paddock::server {

namespace {

Json base_chunk(const std::string& model) { return Json{{"model", model}, {"created_at", now_rfc3339()}}; }

}  // namespace

HttpResponse Api::generate(const HttpRequest& http, const PathParams&) {
  const auto t0 = std::chrono::steady_clock::now();
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_generate(*body);
  if (!req.ok()) return error_response(req.status());
  if (req->model.empty()) return error_response(400, "model is required");
  auto model = resolve(req->model);
  if (!model.ok()) return error_response(model.status());
  if (is_embedding_model(model->info.model_path)) {
    return error_response(400, "\"" + req->model + "\" does not support generate");
  }
  if (!req->images.empty() && model->info.projector_paths.empty()) {
    return error_response(
        400, "\"" + req->model + "\" does not support images: the model has no vision projector");
  }
  if (!req->suffix.empty() && req->raw) return error_response(400, "raw mode does not support suffix");

  const bool unload = req->keep_alive && req->keep_alive->count() == 0;
  if (req->prompt.empty() && req->suffix.empty() && req->images.empty() && unload) {
    // Answered at once, as Ollama does: the model unloads when its running requests end.
    models_.unload(model->key.name);
    Json out = base_chunk(req->model);
    out["response"] = "";
    out["done"] = true;
    out["done_reason"] = "unload";
    return json_response(200, out);
  }

  auto prepared = prepare(models_, metrics_, *model, *req, req->template_text, t0, http.client_gone);
  if (!prepared.ok()) return error_response(prepared.status());
  auto p = std::make_shared<Prepared>(std::move(prepared).value());
  if (!req->suffix.empty() && !p->tmpl.supports_insert) {
    // Ollama's capability check names the model in full (registry.ollama.ai/library/m:latest).
    return error_response(400, model->info.name.display_full() + " does not support insert");
  }

  if (req->prompt.empty() && req->suffix.empty() && req->images.empty()) {
    Json out = base_chunk(req->model);
    out["response"] = "";
    out["done"] = true;
    out["done_reason"] = "load";
    return json_response(200, out);
  }

  std::string prompt = req->prompt;
  if (!req->raw) {
    const std::string system = req->system.value_or(model->info.system);
    auto rendered = render_generate(p->tmpl, system, req->prompt, req->suffix, req->think);
    if (!rendered.ok()) return error_response(500, rendered.status().message());
    prompt = std::move(rendered).value();
    if (!req->context.empty()) {
      auto prefix = p->lease->runner().detokenize(req->context);
      if (!prefix.ok()) return error_response(400, "invalid context: " + prefix.status().message());
      prompt = *prefix + prompt;
    }
  }

  if (!req->truncate) {
    const Status fits = check_prompt_fits(*p, prompt);
    if (!fits.is_ok()) return error_response(fits);
  }

  auto spec = std::make_shared<GenerationSpec>();
  spec->request = completion_request(*p, *req, prompt, http.client_gone);
  if (!req->raw) set_thinking(p->tmpl, req->think, prompt, spec.get());
  const bool want_context = !req->raw;
  const std::string name = req->model;
  const bool cached = http.report_cached_tokens;

  // Runs the completion; `send` gets each NDJSON object (native shape).
  // The last object waits until the runner has returned: its `context` needs the runner again.
  auto run = [p, spec, name, want_context, prompt, cached](const SendFn& send) -> Status {
    std::string response;
    Json last;
    PADDOCK_TRY(run_prepared(*p, *spec, [&](const GenerationEvent& e) {
      Json out = base_chunk(name);
      out["response"] = e.content;
      if (!e.thinking.empty()) out["thinking"] = e.thinking;
      response += e.content;
      if (!e.logprobs.empty()) out["logprobs"] = logprobs_json(e.logprobs);
      out["done"] = e.done;
      if (!e.done) return send(out);
      out["done_reason"] = e.final.done_reason.empty() ? "stop" : e.final.done_reason;
      add_metrics(*p, e.final, cached, &out);
      add_truncation(*spec, e.final, &out);
      if (!e.final.stop_sequence.empty()) out["stop_sequence"] = e.final.stop_sequence;
      last = std::move(out);
      return true;
    }));
    if (last.is_null()) return Status::ok();
    if (want_context) {
      auto tokens = p->lease->runner().tokenize(prompt + response);
      if (tokens.ok()) last["context"] = *tokens;
    }
    send(last);
    return Status::ok();
  };

  if (req->stream) return ndjson_stream(run, http);

  Json total;
  std::string response, thinking;
  Json lps = Json::array();
  const Status s = run([&](const Json& chunk) {
    response += chunk.value("response", "");
    thinking += chunk.value("thinking", "");
    if (chunk.contains("logprobs")) {
      for (const auto& lp : chunk["logprobs"]) lps.push_back(lp);
    }
    if (chunk.value("done", false)) total = chunk;
    return true;
  });
  if (!s.is_ok()) return error_response(s);
  total["response"] = response;
  if (!thinking.empty()) total["thinking"] = thinking;
  if (!lps.empty()) total["logprobs"] = lps;
  HttpResponse r = json_response(200, total);
  set_truncation_header(total.value("prompt_tokens_dropped", int64_t{0}), &r);
  return r;
}

}  // namespace paddock::server
