// Test driver for the registry client (tests/integration/registry_test.sh), until the CLI
// and server call pull_model/push_model themselves. Prints one JSON progress line per event.
//   registry_driver create STORE NAME GGUF | push STORE NAME | pull STORE NAME | rm STORE NAME
//   options after the command: --retry-ms N (first retry delay)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "store/create.h"
#include "store/registry.h"
#include "store/store.h"

using namespace paddock;
using namespace paddock::store;

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return s.code() == Code::kCancelled ? 3 : 1;
}

bool print_event(const ProgressEvent& e) {
  nlohmann::json j{{"status", e.status}};
  if (!e.digest.empty()) {
    j["digest"] = e.digest;
    j["total"] = e.total;
    j["completed"] = e.completed;
  }
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: registry_driver create|push|pull|rm STORE NAME [GGUF] [--retry-ms N]\n");
    return 2;
  }
  std::string cmd = argv[1];
  RegistryOptions opts;
  opts.insecure = true;
  for (int i = 4; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--retry-ms") == 0)
      opts.retry_base_delay = std::chrono::milliseconds(std::atol(argv[i + 1]));
  }
  Result<Store> store = Store::open(argv[2]);
  if (!store) return fail(store.status());
  Result<Name> name = Name::parse(argv[3]);
  if (!name) return fail(name.status());
  Status s;
  if (cmd == "create" && argc >= 5) {
    s = create_model(*store, *name, std::string("FROM ") + argv[4] + "\n", CreateOptions{});
  } else if (cmd == "push") {
    s = push_model(*store, *name, opts, print_event);
  } else if (cmd == "pull") {
    s = pull_model(*store, *name, opts, print_event);
  } else if (cmd == "rm") {
    s = store->remove(*name);
  } else {
    std::fprintf(stderr, "unknown command %s\n", cmd.c_str());
    return 2;
  }
  return s.is_ok() ? 0 : fail(s);
}
