// The network side: serves an Api over HTTP/1.1 with cpp-httplib (a thread per connection,
// capped), streams chunked responses, tells handlers when their client has gone, logs one
// line per request (method, path, status, latency) and on SIGINT/SIGTERM drains within a
// deadline (docs/security.md).
//   PADDOCK_TRY(serve(api, parse_host(env_get_or("HOST", ""))));  // blocks until a signal
#pragma once

#include "base/status.h"
#include "server/api.h"
#include "server/host.h"

namespace paddock::server {

// Blocks until SIGINT/SIGTERM; kUnavailable if the address cannot be bound.
Status serve(Api& api, const HostPort& where);

}  // namespace paddock::server
