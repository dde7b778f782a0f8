// POST /api/embed (batch, L2-normalised, `dimensions`) and the legacy /api/embeddings.
#include <cmath>

#include "server/api.h"
#include "server/inference.h"

namespace paddock::server {

namespace {

Result<std::unique_ptr<Scheduler::Lease>> load_for_embedding(Scheduler& models, const ResolvedModel& model,
                                                             const Json& options,
                                                             std::optional<Duration> keep_alive,
                                                             const std::function<bool()>& gone) {
  PADDOCK_ASSIGN(EffectiveOptions o, effective_options(model.info.params, options));
  runner::LoadOptions load;
  load.num_ctx = o.num_ctx;
  load.num_batch = o.num_batch;
  load.num_thread = o.num_thread;
  load.num_gpu = o.num_gpu;
  return acquire_model(models, model, std::move(load), keep_alive, gone);
}

}  // namespace

// L2 normalisation after truncating to `dimensions` (0 = keep all), as Ollama does.
Result<std::vector<float>> normalize_embedding(std::vector<float> v, int64_t dimensions) {
  if (dimensions > 0 && static_cast<size_t>(dimensions) < v.size()) v.resize(static_cast<size_t>(dimensions));
  double sum = 0;
  for (float x : v) {
    if (!std::isfinite(x)) return invalid_argument("embedding contains NaN or Inf values");
    sum += static_cast<double>(x) * x;
  }
  const double norm = std::sqrt(sum);
  if (norm > 0) {
    for (float& x : v) x = static_cast<float>(x / norm);
  }
  return v;
}

HttpResponse Api::embed(const HttpRequest& http, const PathParams&) {
  const auto t0 = std::chrono::steady_clock::now();
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_embed(*body);
  if (!req.ok()) return error_response(req.status());
  if (req->model.empty()) return error_response(400, "model is required");
  auto model = resolve(req->model, Missing::kTryPulling);
  if (!model.ok()) return error_response(model.status());
  auto lease = load_for_embedding(models_, *model, req->options, req->keep_alive, http.client_gone);
  if (!lease.ok()) return error_response(lease.status());
  Json out{{"model", req->model}, {"embeddings", Json::array()}};
  int64_t tokens = 0;
  if (!req->inputs.empty()) {
    auto vecs = (*lease)->runner().embed(req->inputs, req->truncate);
    if (!vecs.ok()) return error_response(vecs.status());
    for (runner::Embedding& e : *vecs) {
      auto v = normalize_embedding(std::move(e.values), req->dimensions);
      if (!v.ok()) return error_response(500, v.status().message());
      out["embeddings"].push_back(*v);
      tokens += e.prompt_tokens;
    }
  }
  out["total_duration"] = ns_since(t0);
  out["load_duration"] = (*lease)->load_duration_ns();
  out["prompt_eval_count"] = tokens;
  return json_response(200, out);
}

HttpResponse Api::embeddings(const HttpRequest& http, const PathParams&) {
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_embeddings(*body);
  if (!req.ok()) return error_response(req.status());
  if (req->model.empty()) return error_response(400, "model is required");
  auto model = resolve(req->model, Missing::kTryPulling);
  if (!model.ok()) return error_response(model.status());
  auto lease = load_for_embedding(models_, *model, req->options, req->keep_alive, http.client_gone);
  if (!lease.ok()) return error_response(lease.status());
  Json values = Json::array();
  if (!req->prompt.empty()) {
    auto vecs = (*lease)->runner().embed({req->prompt}, true);
    if (!vecs.ok()) return error_response(500, vecs.status().message());
    if (!vecs->empty()) {
      for (float x : vecs->front().values) values.push_back(static_cast<double>(x));
    }
  }
  return json_response(200, Json{{"embedding", values}});
}

}  // namespace paddock::server
