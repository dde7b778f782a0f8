// Better than Ollama: a client command that finds no server on a local host starts one in
// the background (this binary's `serve`, detached in its own session, output appended to
// ~/.paddock/logs/server.log), waits until `HEAD /` answers, and says so on stderr. Remote
// hosts, and PADDOCK_NOAUTOSTART=1, keep Ollama's behaviour: the connection error.
//   PADDOCK_ASSIGN(HttpClient client, connect_or_start());
#pragma once

#include "base/status.h"
#include "cli/http_client.h"

namespace paddock::cli {

Result<HttpClient> connect_or_start();

}  // namespace paddock::cli
