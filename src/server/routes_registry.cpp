// POST /api/pull and /api/push: the registry client's progress events streamed as NDJSON
// ({status, digest, total, completed}), or with stream:false the last event / the error with
// its status. A client that disconnects cancels the transfer; a pull keeps its partial files
// so the next pull resumes.
#include "server/api.h"
#include "server/api_util.h"
#include "server/inference.h"
#include "store/registry.h"

namespace paddock::server {

namespace {

using TransferFn = Status (*)(store::Store&, const store::Name&, const store::RegistryOptions&,
                              const store::ProgressFn&);

Json event_json(const store::ProgressEvent& e) {
  Json j{{"status", e.status}};
  if (!e.digest.empty()) {
    j["digest"] = e.digest;
    j["total"] = e.total;
    j["completed"] = e.completed;
  }
  return j;
}

}  // namespace

HttpResponse Api::transfer(const HttpRequest& http, bool is_push) {
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_model_request(*body);
  if (!req.ok()) return error_response(req.status());
  if (req->model.empty()) return error_response(400, "model is required");
  auto name = store::Name::parse(req->model);
  if (!name.ok()) return error_response(400, "invalid model name");

  store::RegistryOptions opts;
  opts.insecure = req->insecure;
  opts.user_agent = "paddock/" + config_.version;
  opts.cancelled = http.client_gone;
  const TransferFn fn = is_push ? store::push_model : store::pull_model;
  auto run = [this, n = *name, opts, fn](const SendFn& send) -> Status {
    return fn(store_, n, opts, [&](const store::ProgressEvent& e) { return send(event_json(e)); });
  };
  return progress_response(req->stream, run, http);
}

HttpResponse Api::pull(const HttpRequest& http, const PathParams&) { return transfer(http, false); }
HttpResponse Api::push(const HttpRequest& http, const PathParams&) { return transfer(http, true); }

}  // namespace paddock::server
