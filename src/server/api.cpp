#include "server/api.h"

#include <array>
#include <chrono>
#include <memory>

#include "base/log.h"
#include "server/anthropic.h"
#include "server/api_util.h"

namespace paddock::server {

namespace {

struct Route {
  std::string_view method;
  std::string_view pattern;  // segments starting with ':' capture
  Api::Handler handler;
};

bool match(std::string_view pattern, std::string_view path, PathParams* params) {
  while (!pattern.empty() || !path.empty()) {
    if (pattern.empty() || path.empty() || pattern[0] != '/' || path[0] != '/') return false;
    pattern.remove_prefix(1);
    path.remove_prefix(1);
    const size_t pe = pattern.find('/'), te = path.find('/');
    const std::string_view pseg = pattern.substr(0, pe), tseg = path.substr(0, te);
    if (!pseg.empty() && pseg[0] == ':') {
      // The last capture takes the rest (OpenAI model ids may contain '/').
      if (pe == std::string_view::npos) {
        if (path.empty()) return false;
        (*params)[std::string(pseg.substr(1))] = std::string(path);
        return true;
      }
      if (tseg.empty()) return false;
      (*params)[std::string(pseg.substr(1))] = std::string(tseg);
    } else if (pseg != tseg) {
      return false;
    }
    pattern.remove_prefix(pseg.size());
    path.remove_prefix(tseg.size());
  }
  return true;
}

}  // namespace

struct RouteTable {
  static constexpr std::array kRoutes = {
      Route{"GET", "/", &Api::root},
      Route{"HEAD", "/", &Api::root},
      Route{"GET", "/api/version", &Api::version},
      Route{"HEAD", "/api/version", &Api::version},
      Route{"GET", "/health", &Api::health},
      Route{"HEAD", "/health", &Api::health},
      Route{"POST", "/api/generate", &Api::generate},
      Route{"POST", "/api/chat", &Api::chat},
      Route{"POST", "/api/embed", &Api::embed},
      Route{"POST", "/api/embeddings", &Api::embeddings},
      Route{"GET", "/api/tags", &Api::tags},
      Route{"HEAD", "/api/tags", &Api::tags},
      Route{"POST", "/api/show", &Api::show},
      Route{"POST", "/api/create", &Api::create},
      Route{"HEAD", "/api/blobs/:digest", &Api::head_blob},
      Route{"POST", "/api/blobs/:digest", &Api::post_blob},
      Route{"POST", "/api/copy", &Api::copy},
      Route{"DELETE", "/api/delete", &Api::remove},
      Route{"POST", "/api/pull", &Api::pull},
      Route{"POST", "/api/push", &Api::push},
      Route{"GET", "/api/ps", &Api::ps},
      Route{"GET", "/metrics", &Api::metrics},
      Route{"POST", "/v1/chat/completions", &Api::oai_chat},
      Route{"POST", "/v1/completions", &Api::oai_completions},
      Route{"POST", "/v1/embeddings", &Api::oai_embeddings},
      Route{"GET", "/v1/models", &Api::oai_models},
      Route{"GET", "/v1/models/:model", &Api::oai_model},
      Route{"POST", "/v1/messages", &Api::anthropic_messages},
      Route{"POST", "/v1/messages/count_tokens", &Api::anthropic_count_tokens},
      Route{"POST", "/v1/responses", &Api::responses_create},
      Route{"GET", "/v1/responses/:id", &Api::responses_get},
  };
};
static_assert(RouteTable::kRoutes.size() == 31, "one row per route; update docs/api.md with the table");

namespace {

// The metrics' route label: the pattern of the first route whose path matches (whatever the
// method), so that label values stay a fixed set; "other" for unknown paths.
std::string_view route_label(std::string_view path) {
  for (const Route& route : RouteTable::kRoutes) {
    PathParams params;
    if (match(route.pattern, path, &params)) return route.pattern;
  }
  return "other";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The scheduler's events, counted in `metrics`.
SchedulerEffects reporting_to(ServerMetrics& metrics, SchedulerEffects effects) {
  effects.on_event = [&metrics](SchedulerEvent event, const ModelIdentity& model) {
    switch (event) {
      case SchedulerEvent::kLoaded: metrics.model_loaded(model.name); break;
      case SchedulerEvent::kEvicted: metrics.model_evicted(model.name); break;
      case SchedulerEvent::kRunnerDead: metrics.runner_crashed(model.name); break;
    }
  };
  return effects;
}

HttpResponse plain(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

constexpr const char* kAllowHeaders =
    "Authorization, Content-Type, User-Agent, Accept, X-Requested-With, OpenAI-Beta, x-stainless-arch, "
    "x-stainless-async, x-stainless-custom-poll-interval, x-stainless-helper-method, x-stainless-lang, "
    "x-stainless-os, x-stainless-package-version, x-stainless-poll-helper, x-stainless-retry-count, "
    "x-stainless-runtime, x-stainless-runtime-version, x-stainless-timeout, x-api-key, anthropic-version, "
    "anthropic-beta, anthropic-dangerous-direct-browser-access";

// nlohmann's message without its "[json.exception.type_error.302] " tag.
std::string untagged(const char* what) {
  const std::string_view w(what);
  const size_t tag_end = w.find("] ");
  return std::string(tag_end == std::string_view::npos ? w : w.substr(tag_end + 2));
}

bool is_anthropic(std::string_view path) { return path.rfind("/v1/messages", 0) == 0; }
bool is_openai(std::string_view path) { return !is_anthropic(path) && path.rfind("/v1/", 0) == 0; }

// An error in the shape of the API `path` belongs to.
HttpResponse api_error(std::string_view path, int status, const std::string& message) {
  if (is_anthropic(path)) return anthropic::error_response(status, message);
  return is_openai(path) ? openai_error_response(status, message) : error_response(status, message);
}

// Counts a request in Api::in_flight_ while it lives.
struct InFlight {
  explicit InFlight(std::atomic<int64_t>& n) : count(n) { ++count; }
  ~InFlight() { --count; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  std::atomic<int64_t>& count;
};

}  // namespace

HttpResponse Api::run_handler(Handler handler, const HttpRequest& request, const PathParams& params) {
  auto in_flight = std::make_shared<InFlight>(in_flight_);
  HttpResponse r;
  // Handlers read request JSON with nlohmann accessors that throw on a wrong type; such a
  // request is the client's mistake, so it gets a 400 in its API's error shape (without
  // the HTTP library's 500 and its EXCEPTION_WHAT header).
  try {
    r = (this->*handler)(request, params);
  } catch (const nlohmann::json::exception& e) {
    return api_error(request.path, 400, "invalid request: " + untagged(e.what()));
  } catch (const std::exception& e) {
    log_error("internal error on " + request.path + ": " + e.what());
    return api_error(request.path, 500, "internal server error");
  }
  if (r.stream) {
    r.stream = [in_flight, inner = std::move(r.stream)](const WriteFn& write) { inner(write); };
  }
  return r;
}

Api::Api(store::Store store, SchedulerEffects effects, ApiConfig config)
    : store_(std::move(store)),
      models_(config.scheduler, reporting_to(metrics_, std::move(effects))),
      config_(std::move(config)) {}

HttpResponse Api::handle(HttpRequest request) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string_view route = route_label(request.path);
  HttpResponse r = respond(std::move(request));
  if (!r.stream) {
    metrics_.request_done(route, r.status, seconds_since(t0));
    return r;
  }
  // A stream's request ends when its last byte is written.
  r.stream = [this, route, t0, status = r.status, inner = std::move(r.stream)](const WriteFn& write) {
    inner(write);
    metrics_.request_done(route, status, seconds_since(t0));
  };
  return r;
}

HttpResponse Api::respond(HttpRequest request) {
  if (!host_allowed(request.header("Host"), config_.bound_host)) return plain(403, "");
  const std::string origin = request.header("Origin");
  const bool cors_ok = !origin.empty() && config_.origins.allows(origin);
  if (!origin.empty() && !cors_ok) return plain(403, "");
  auto with_cors = [&](HttpResponse r) {
    if (cors_ok) {
      r.headers.emplace_back("Access-Control-Allow-Origin", origin);
      r.headers.emplace_back("Vary", "Origin");
    }
    return r;
  };
  if (const std::optional<Denied> denied = config_.keys.check(request)) {
    HttpResponse r = request.path.rfind("/v1/", 0) == 0 ? openai_error_response(denied->status, denied->message)
                                                        : error_response(denied->status, denied->message);
    if (denied->status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return with_cors(std::move(r));
  }
  if (request.method == "OPTIONS") {
    HttpResponse r = plain(204, "");
    if (cors_ok) {
      r.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS");
      r.headers.emplace_back("Access-Control-Allow-Headers", kAllowHeaders);
      r.headers.emplace_back("Access-Control-Max-Age", "43200");
    }
    return with_cors(std::move(r));
  }
  if (draining_.load() && request.path != "/health") {
    return with_cors(api_error(request.path, 503, kShuttingDownMessage));
  }
  // Work stops when its client leaves or the server shuts down.
  request.shutting_down = [this] { return draining_.load(); };
  request.client_gone = [this, gone = std::move(request.client_gone)] {
    return draining_.load() || (gone && gone());
  };
  if (request.body.size() > config_.max_body_bytes) {
    return with_cors(error_response(
        413, "request body too large: the limit is " + std::to_string(config_.max_body_bytes) + " bytes"));
  }
  bool path_known = false;
  for (const Route& route : RouteTable::kRoutes) {
    PathParams params;
    if (!match(route.pattern, request.path, &params)) continue;
    path_known = true;
    if (route.method != request.method) continue;
    return with_cors(run_handler(route.handler, request, params));
  }
  return with_cors(path_known ? plain(405, "405 method not allowed") : plain(404, "404 page not found"));
}

HttpResponse Api::root(const HttpRequest&, const PathParams&) { return plain(200, "Ollama is running"); }

// For load balancers and orchestrators: 503 from the moment shutdown begins.
HttpResponse Api::health(const HttpRequest&, const PathParams&) {
  if (draining_.load()) return json_response(503, Json{{"status", "shutting down"}});
  return json_response(200, Json{{"status", "ok"}});
}

HttpResponse Api::version(const HttpRequest&, const PathParams&) {
  // Clients gate features on Ollama's version; paddock's own goes alongside.
  return json_response(200, Json{{"version", kOllamaApiVersion}, {"paddock_version", config_.version}});
}

}  // namespace paddock::server
