// `create MODEL [-f Modelfile] [-q TYPE]`: parses the Modelfile here, uploads local FROM and
// ADAPTER files as blobs (HEAD then POST /api/blobs/sha256:<hex>), then POST /api/create
// with `files`/`adapters` or `from`, as Ollama's client does; the server builds the model.
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/mapped_file.h"
#include "base/sha256.h"
#include "cli/autostart.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "store/modelfile.h"

namespace paddock::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "Create a model\n\nUsage:\n  paddock create MODEL [flags]\n\nFlags:\n"
    "  -f, --file string       Name of the Modelfile (default \"Modelfile\")\n"
    "  -q, --quantize string   Quantize model to this level (e.g. q4_K_M)\n";

// FROM/ADAPTER values that name a local file or folder, resolved against the Modelfile's
// folder; anything else is a model name.
std::optional<fs::path> local_path(const std::string& value, const fs::path& base) {
  fs::path p = value;
  if (value.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    if (home != nullptr) p = fs::path(home) / value.substr(2);
  }
  if (p.is_relative()) p = base / p;
  std::error_code ec;
  if (fs::exists(p, ec)) return p;
  return std::nullopt;
}

// Uploads one file unless the server has it already; returns "sha256:<hex>".
Result<std::string> upload_blob(const HttpClient& client, const fs::path& file, ProgressPrinter& progress) {
  PADDOCK_ASSIGN(const std::string hex, sha256_file_hex(file.string()));
  const std::string digest = "sha256:" + hex;
  PADDOCK_ASSIGN(const int status, client.head("/api/blobs/" + digest));
  if (status == 200) return digest;
  const std::string message = "copying file " + digest;
  PADDOCK_TRY(client.upload("/api/blobs/" + digest, file.string(), [&](int64_t sent, int64_t total) {
    progress.update({{"status", message}, {"digest", digest}, {"total", total}, {"completed", sent}});
  }));
  return digest;
}

// files map for a FROM/ADAPTER path: the file itself, or the GGUF files of a folder.
Result<nlohmann::json> upload_path(const HttpClient& client, const fs::path& path,
                                   ProgressPrinter& progress) {
  nlohmann::json files = nlohmann::json::object();
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::directory_iterator(path)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".gguf") continue;
      PADDOCK_ASSIGN(files[entry.path().filename().string()], upload_blob(client, entry.path(), progress));
    }
    if (files.empty()) return invalid_argument("no GGUF files found in " + path.string());
    return files;
  }
  PADDOCK_ASSIGN(files[path.filename().string()], upload_blob(client, path, progress));
  return files;
}

Result<nlohmann::json> build_request(const HttpClient& client, const std::string& name,
                                     const fs::path& modelfile, const std::string& quantize,
                                     ProgressPrinter& progress) {
  PADDOCK_ASSIGN(const std::string text, read_file(modelfile.string()));
  auto parsed = store::parse_modelfile(text);
  if (!parsed.ok()) return parsed.status().with_context(modelfile.string());
  const store::Modelfile& mf = *parsed;
  if (mf.from.empty()) return invalid_argument("no FROM line in " + modelfile.string());
  const fs::path base = modelfile.parent_path().empty() ? fs::path(".") : modelfile.parent_path();
  nlohmann::json req = {{"model", name}, {"stream", true}};
  if (const auto p = local_path(mf.from[0], base)) {
    PADDOCK_ASSIGN(req["files"], upload_path(client, *p, progress));
  } else {
    req["from"] = mf.from[0];
  }
  for (const std::string& adapter : mf.adapters) {
    const auto p = local_path(adapter, base);
    if (!p) return invalid_argument("adapter " + adapter + " not found");
    PADDOCK_ASSIGN(const nlohmann::json files, upload_path(client, *p, progress));
    if (!req.contains("adapters")) req["adapters"] = nlohmann::json::object();
    req["adapters"].update(files);
  }
  if (mf.template_text) req["template"] = *mf.template_text;
  if (mf.system) req["system"] = *mf.system;
  if (!mf.licenses.empty()) req["license"] = mf.licenses;
  if (!mf.params.empty()) req["parameters"] = nlohmann::json::parse(mf.params.to_json());
  if (!mf.messages.empty()) {
    req["messages"] = nlohmann::json::array();
    for (const store::Message& m : mf.messages)
      req["messages"].push_back({{"role", m.role}, {"content", m.content}});
  }
  if (!mf.requires_version.empty()) req["requires"] = mf.requires_version;
  if (!mf.renderer.empty()) req["renderer"] = mf.renderer;
  if (!mf.parser.empty()) req["parser"] = mf.parser;
  if (!quantize.empty()) req["quantize"] = quantize;
  for (const std::string& w : mf.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return req;
}

}  // namespace

int run_create(int argc, char** argv) {
  std::string name, file = "Modelfile", quantize;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-h" || a == "--help") return std::fputs(kUsage, stdout), 0;
    if ((a == "-f" || a == "--file") && has_value) {
      file = argv[++i];
    } else if ((a == "-q" || a == "--quantize") && has_value) {
      quantize = argv[++i];
    } else if (!a.starts_with("-") && name.empty()) {
      name = a;
    } else {
      std::fprintf(stderr, "Error: unexpected argument \"%s\"\n%s", argv[i], kUsage);
      return 1;
    }
  }
  if (name.empty()) {
    std::fprintf(stderr, "Error: accepts 1 arg(s), received 0\n%s", kUsage);
    return 1;
  }
  std::error_code ec;
  if (!fs::exists(file, ec)) return report_error(not_found("no Modelfile found at " + file));
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  ProgressPrinter progress(stderr);
  auto req = build_request(*client, name, file, quantize, progress);
  if (!req.ok()) return report_error(req.status());
  const Status s = client->stream("/api/create", *req, [&](const nlohmann::json& o) {
    progress.update(o);
    return true;
  });
  if (!s.is_ok()) return report_error(s);
  progress.finish();
  return 0;
}

}  // namespace paddock::cli
