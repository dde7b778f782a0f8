// The HTTP API (Ollama's native routes, the OpenAI- and Anthropic-compatible ones) as a pure function
// from HttpRequest to HttpResponse, over a model store and an injected RunnerFactory.
// The route table (api.cpp) is explicit; each route's handler lives in routes_*.cpp.
// Invariants: errors are Ollama's `{"error": "..."}` (OpenAI and Anthropic routes re-wrap them); a
// streamed response reports errors that occur after the first byte as a last NDJSON line.
//   Api api(std::move(store), factory, ApiConfig{});
//   HttpResponse r = api.handle(request);
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "runner/runner.h"
#include "server/api_keys.h"
#include "server/cors.h"
#include "server/duration.h"
#include "server/http_types.h"
#include "server/metrics.h"
#include "server/requests.h"
#include "server/response_store.h"
#include "server/scheduler.h"
#include "store/store.h"

namespace paddock::server {

// The Ollama release whose API paddock serves, reported by /api/version: clients gate
// features on it (logprobs need 0.12.11). Raise it with the API, not with paddock.
inline constexpr const char* kOllamaApiVersion = "0.12.11";

struct ApiConfig {
  SchedulerConfig scheduler;  // max loaded models, parallel, queue, default keep_alive
  OriginPolicy origins{{}};
  std::string bound_host = "127.0.0.1";
  size_t max_body_bytes = size_t{64} << 20;  // JSON bodies; blob uploads stream
  std::string version = "0.0.0";
  ApiKeys keys;  // none: no authentication
};

// Path parameters of a matched route (":digest", ":model").
using PathParams = std::map<std::string, std::string>;

struct ResolvedModel;
struct RouteTable;  // api.cpp: the one explicit table of routes

class Api {
 public:
  Api(store::Store store, SchedulerEffects effects, ApiConfig config);

  // Routing, host check, CORS headers and preflight, method checks, body limit; every answer
  // is counted in the metrics by route pattern and status (a stream's when it ends).
  HttpResponse handle(HttpRequest request);
  // Shutdown: every running request is cancelled (a stream ends with an error line), new
  // ones get 503, /health answers 503.
  void begin_drain() { draining_.store(true); }
  // Requests being handled or streamed.
  int64_t in_flight() const { return in_flight_.load(); }
  Scheduler& models() { return models_; }
  size_t max_body_bytes() const { return config_.max_body_bytes; }

  using Handler = HttpResponse (Api::*)(const HttpRequest&, const PathParams&);

 private:
  friend struct RouteTable;
  // Native routes.
  HttpResponse root(const HttpRequest&, const PathParams&);
  HttpResponse version(const HttpRequest&, const PathParams&);
  HttpResponse health(const HttpRequest&, const PathParams&);
  HttpResponse generate(const HttpRequest&, const PathParams&);
  HttpResponse chat(const HttpRequest&, const PathParams&);
  HttpResponse embed(const HttpRequest&, const PathParams&);
  HttpResponse embeddings(const HttpRequest&, const PathParams&);
  HttpResponse tags(const HttpRequest&, const PathParams&);
  HttpResponse show(const HttpRequest&, const PathParams&);
  HttpResponse create(const HttpRequest&, const PathParams&);
  HttpResponse head_blob(const HttpRequest&, const PathParams&);
  HttpResponse post_blob(const HttpRequest&, const PathParams&);
  HttpResponse copy(const HttpRequest&, const PathParams&);
  HttpResponse remove(const HttpRequest&, const PathParams&);
  HttpResponse pull(const HttpRequest&, const PathParams&);
  HttpResponse push(const HttpRequest&, const PathParams&);
  HttpResponse transfer(const HttpRequest& http, bool is_push);  // pull and push
  HttpResponse ps(const HttpRequest&, const PathParams&);
  HttpResponse metrics(const HttpRequest&, const PathParams&);  // Prometheus text format
  // OpenAI routes: translate, call the native handler, translate back.
  HttpResponse oai_chat(const HttpRequest&, const PathParams&);
  HttpResponse oai_completions(const HttpRequest&, const PathParams&);
  HttpResponse oai_embeddings(const HttpRequest&, const PathParams&);
  HttpResponse oai_models(const HttpRequest&, const PathParams&);
  HttpResponse oai_model(const HttpRequest&, const PathParams&);
  // Anthropic Messages routes: translate, call the native chat handler, translate back.
  HttpResponse anthropic_messages(const HttpRequest&, const PathParams&);
  HttpResponse anthropic_count_tokens(const HttpRequest&, const PathParams&);
  // The tokens of a translated Messages request's prompt (loads the model).
  Result<int64_t> anthropic_prompt_tokens(const Json& native_chat, const std::function<bool()>& client_gone);
  // OpenAI Responses routes: translate, call the native chat handler, translate back; the
  // answers are kept in responses_ for previous_response_id and GET.
  HttpResponse responses_create(const HttpRequest&, const PathParams&);
  HttpResponse responses_get(const HttpRequest&, const PathParams&);

  // handle() without the metrics.
  HttpResponse respond(HttpRequest request);
  // A route's handler, with exceptions turned into error responses, counted in in_flight_
  // until its stream ends.
  HttpResponse run_handler(Handler handler, const HttpRequest& request, const PathParams& params);
  // How a route words a model missing from the store, as Ollama's route does: generate, chat
  // and show say model 'x' not found; embed and embeddings, where Ollama's scheduler finds it
  // missing, say model "x" not found, try pulling it first.
  enum class Missing { kNotFound, kTryPulling };
  // The stored model behind a request's name: 400 invalid name, 404 not found.
  Result<ResolvedModel> resolve(const std::string& name, Missing wording = Missing::kNotFound);

  store::Store store_;
  ServerMetrics metrics_;  // before models_: the scheduler reports to it
  Scheduler models_;
  ApiConfig config_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> in_flight_{0};
  ResponseStore responses_;
};

}  // namespace paddock::server
