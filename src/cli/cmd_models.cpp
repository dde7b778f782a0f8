// `list`/`ls`, `ps`, `rm`, `cp` and `stop`: model management over the REST API, printed as
// Ollama prints it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/autostart.h"
#include "cli/client_ops.h"
#include "cli/commands.h"
#include "cli/ui/format.h"

namespace paddock::cli {

namespace {

int64_t now_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool has_prefix_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) return true;
  }
  return false;
}

int usage_error(const char* usage) {
  std::fprintf(stderr, "Error: accepts the arguments shown\n%s", usage);
  return 1;
}

std::string short_id(const nlohmann::json& m) {
  std::string digest = m.value("digest", "");
  if (digest.starts_with("sha256:")) digest = digest.substr(7);
  return digest.substr(0, 12);
}

}  // namespace

Status print_model_list(const HttpClient& client, std::string_view prefix) {
  PADDOCK_ASSIGN(const nlohmann::json tags, client.call("GET", "/api/tags"));
  std::vector<std::vector<std::string>> rows = {{"NAME", "ID", "SIZE", "MODIFIED"}};
  const int64_t now = now_nanos();
  for (const auto& m : tags.value("models", nlohmann::json::array())) {
    const std::string name = m.value("name", "");
    if (!has_prefix_ci(name, prefix)) continue;
    const bool remote = m.contains("remote_model");
    const auto modified = ui::parse_rfc3339(m.value("modified_at", ""));
    rows.push_back({name, short_id(m), remote ? "-" : ui::human_bytes(m.value("size", int64_t{0})),
                    modified ? ui::human_time(*modified, now) : "Never"});
  }
  std::fputs(ui::format_table(rows).c_str(), stdout);
  return Status::ok();
}

int run_list(int argc, char** argv) {
  constexpr const char* kUsage = "Usage:\n  paddock list [PREFIX]\n\nAliases:\n  list, ls\n";
  if (wants_help(argc, argv)) return std::fputs(kUsage, stdout), 0;
  if (argc > 2) return usage_error(kUsage);
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  const Status s = print_model_list(*client, argc == 2 ? argv[1] : "");
  return s.is_ok() ? 0 : report_error(s);
}

int run_ps(int argc, char** argv) {
  constexpr const char* kUsage = "Usage:\n  paddock ps [PREFIX]\n";
  if (wants_help(argc, argv)) return std::fputs(kUsage, stdout), 0;
  if (argc > 2) return usage_error(kUsage);
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  auto ps = client->call("GET", "/api/ps");
  if (!ps.ok()) return report_error(ps.status());
  const std::string_view prefix = argc == 2 ? argv[1] : "";
  std::vector<std::vector<std::string>> rows = {{"NAME", "ID", "SIZE", "PROCESSOR", "CONTEXT", "UNTIL"}};
  const int64_t now = now_nanos();
  for (const auto& m : ps->value("models", nlohmann::json::array())) {
    const std::string name = m.value("name", "");
    if (!has_prefix_ci(name, prefix)) continue;
    const int64_t size = m.value("size", int64_t{0});
    const auto expires = ui::parse_rfc3339(m.value("expires_at", ""));
    std::string until = "Never";
    if (expires) until = *expires < now ? "Stopping..." : ui::human_time(*expires, now);
    const int64_t ctx = m.value("context_length", int64_t{0});
    rows.push_back({name, short_id(m), ui::human_bytes(size),
                    ui::processor_text(size, m.value("size_vram", int64_t{0})),
                    ctx > 0 ? std::to_string(ctx) : "", until});
  }
  std::fputs(ui::format_table(rows).c_str(), stdout);
  return 0;
}

int run_rm(int argc, char** argv) {
  constexpr const char* kUsage = "Usage:\n  paddock rm MODEL [MODEL...]\n";
  if (wants_help(argc, argv)) return std::fputs(kUsage, stdout), 0;
  if (argc < 2) return usage_error(kUsage);
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  for (int i = 1; i < argc; ++i) {
    // Unload first so the runner releases the blobs; a model that is not loaded is fine.
    (void)client->call("POST", "/api/generate", {{"model", argv[i]}, {"keep_alive", 0}, {"stream", false}});
    const auto r = client->call("DELETE", "/api/delete", {{"model", argv[i]}});
    if (!r.ok()) return report_error(r.status());
    std::printf("deleted '%s'\n", argv[i]);
  }
  return 0;
}

int run_cp(int argc, char** argv) {
  constexpr const char* kUsage = "Usage:\n  paddock cp SOURCE DESTINATION\n";
  if (wants_help(argc, argv)) return std::fputs(kUsage, stdout), 0;
  if (argc != 3) return usage_error(kUsage);
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  const auto r = client->call("POST", "/api/copy", {{"source", argv[1]}, {"destination", argv[2]}});
  if (!r.ok()) return report_error(r.status());
  std::printf("copied '%s' to '%s'\n", argv[1], argv[2]);
  return 0;
}

int run_stop(int argc, char** argv) {
  constexpr const char* kUsage = "Usage:\n  paddock stop MODEL\n";
  if (wants_help(argc, argv)) return std::fputs(kUsage, stdout), 0;
  if (argc != 2) return usage_error(kUsage);
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  const auto r =
      client->call("POST", "/api/generate", {{"model", argv[1]}, {"keep_alive", 0}, {"stream", false}});
  if (!r.ok()) {
    if (r.status().code() == Code::kNotFound) {
      return report_error(not_found("couldn't find model \"" + std::string(argv[1]) + "\" to stop"));
    }
    return report_error(r.status());
  }
  return 0;
}

}  // namespace paddock::cli
