// `paddock serve`: the Ollama-compatible HTTP server on OLLAMA_HOST / PADDOCK_HOST over the
// model store at PADDOCK_MODELS / OLLAMA_MODELS. The inference side is plugged in through
// make_runner_factory(), the one place that names the engine.
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/env.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/version.h"
#include "runner/in_process_runner.h"
#include "runner/runner.h"
#include "server/api.h"
#include "server/http_server.h"
#include "store/store.h"

namespace paddock::cli {

namespace {

constexpr const char* kUsage =
    "Start paddock\n\nUsage:\n  paddock serve\n\nEnvironment Variables:\n"
    "      OLLAMA_HOST                IP Address for the paddock server (default 127.0.0.1:11434)\n"
    "      OLLAMA_KEEP_ALIVE          The duration that models stay loaded in memory (default \"5m\")\n"
    "      OLLAMA_MODELS              The path to the models directory\n"
    "      OLLAMA_ORIGINS             A comma separated list of allowed origins\n"
    "      OLLAMA_DEBUG               Show additional debug information (e.g. OLLAMA_DEBUG=1)\n"
    "  (each is also read as PADDOCK_<NAME>, which wins)\n";

// The runner behind the generation routes: the engine, in this process.
runner::RunnerFactory make_runner_factory() { return runner::make_in_process_factory(); }

}  // namespace

int run_serve(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "Error: unknown argument \"%s\" for \"paddock serve\"\n", argv[i]);
    return 1;
  }
  auto store = store::Store::open(store::Store::default_root());
  if (!store.ok()) {
    std::fprintf(stderr, "Error: %s\n", store.status().message().c_str());
    return 1;
  }
  const server::HostPort where = server::parse_host(env_get_or("HOST", ""));
  server::ApiConfig config;
  config.default_keep_alive = server::keep_alive_from_env();
  config.origins = server::OriginPolicy::from_env();
  config.bound_host = where.host;
  config.version = kVersion;
  server::Api api(std::move(store).value(), make_runner_factory(), config);
  const Status s = server::serve(api, where);
  if (!s.is_ok()) {
    std::fprintf(stderr, "Error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace paddock::cli
