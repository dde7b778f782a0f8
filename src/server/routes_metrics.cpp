// GET /metrics: the server's metrics in Prometheus' text exposition format (docs/api.md).
#include "server/api.h"

namespace paddock::server {

HttpResponse Api::metrics(const HttpRequest&, const PathParams&) {
  // The scheduler's state is read now; events were counted as they happened.
  std::vector<LoadedModelSample> loaded;
  for (const RunningModel& m : models_.list())
    loaded.push_back({.name = m.model.name, .memory_bytes = m.size});
  metrics_.set_scheduler_state(loaded, models_.queue_depth());
  HttpResponse r;
  r.content_type = kMetricsContentType;
  r.body = metrics_.render();
  return r;
}

}  // namespace paddock::server
