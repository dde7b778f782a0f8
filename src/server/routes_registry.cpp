// POST /api/pull and /api/push: the registry client is a later issue; until it lands both
// answer in Ollama's error form so clients show a clear message.
#include "server/api.h"
#include "server/api_util.h"

namespace paddock::server {

namespace {

HttpResponse not_available(const HttpRequest& http, const char* what) {
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_model_request(*body);
  if (!req.ok()) return error_response(req.status());
  if (req->model.empty()) return error_response(400, "model is required");
  if (!store::Name::parse(req->model).ok()) return error_response(400, "invalid model name");
  return error_response(501, std::string(what) + " model \"" + req->model +
                                 "\": the registry client is not available in this build of paddock");
}

}  // namespace

HttpResponse Api::pull(const HttpRequest& http, const PathParams&) { return not_available(http, "pull"); }
HttpResponse Api::push(const HttpRequest& http, const PathParams&) { return not_available(http, "push"); }

}  // namespace paddock::server
