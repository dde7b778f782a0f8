// `pull MODEL [--insecure]` and `push MODEL [--insecure]`: registry transfers run by the
// server, shown here as per-layer progress bars.
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/autostart.h"
#include "cli/client_ops.h"
#include "cli/commands.h"
#include "cli/progress.h"

namespace paddock::cli {

namespace {

Status transfer(const HttpClient& client, const char* route, const std::string& name, bool insecure) {
  ProgressPrinter progress(stderr);
  const Status s = client.stream(route, {{"model", name}, {"insecure", insecure}, {"stream", true}},
                                 [&](const nlohmann::json& o) {
                                   progress.update(o);
                                   return true;
                                 });
  if (s.is_ok()) progress.finish();
  return s;
}

int transfer_command(int argc, char** argv, const char* verb, const char* route) {
  const std::string usage = std::string("Usage:\n  paddock ") + verb +
                            " MODEL [flags]\n\nFlags:\n"
                            "      --insecure   Use an insecure registry\n";
  std::string name;
  bool insecure = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") return std::fputs(usage.c_str(), stdout), 0;
    if (a == "--insecure") {
      insecure = true;
    } else if (!a.starts_with("-") && name.empty()) {
      name = a;
    } else {
      std::fprintf(stderr, "Error: unexpected argument \"%s\"\n%s", argv[i], usage.c_str());
      return 1;
    }
  }
  if (name.empty()) {
    std::fprintf(stderr, "Error: accepts 1 arg(s), received 0\n%s", usage.c_str());
    return 1;
  }
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  const Status s = transfer(*client, route, name, insecure);
  return s.is_ok() ? 0 : report_error(s);
}

}  // namespace

Status pull_model(const HttpClient& client, const std::string& name, bool insecure) {
  return transfer(client, "/api/pull", name, insecure);
}

int run_pull(int argc, char** argv) { return transfer_command(argc, argv, "pull", "/api/pull"); }
int run_push(int argc, char** argv) { return transfer_command(argc, argv, "push", "/api/push"); }

}  // namespace paddock::cli
