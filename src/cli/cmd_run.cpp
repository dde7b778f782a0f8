// `run MODEL [PROMPT...]` and the over-HTTP half of `show MODEL`. run pulls a missing model
// first (like Ollama), answers once when a prompt is given or piped in, and otherwise opens
// the interactive prompt after loading the model (spinner while it loads). An embedding
// model prints the input's embedding as a JSON array instead, as Ollama does.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "cli/autostart.h"
#include "cli/client_ops.h"
#include "cli/commands.h"
#include "cli/repl.h"
#include "cli/ui/format.h"

namespace paddock::cli {

namespace {

constexpr const char* kUsage =
    "Run a model\n\nUsage:\n  paddock run MODEL [PROMPT] [flags]\n\nFlags:\n"
    "      --format string      Response format (e.g. json)\n"
    "      --hidethinking       Hide thinking output (if provided)\n"
    "      --insecure           Use an insecure registry\n"
    "      --keepalive string   Duration to keep a model loaded (e.g. 5m)\n"
    "      --nowordwrap         Don't wrap words to the next line automatically\n"
    "      --think[=true|false|low|medium|high|max]   Enable thinking mode\n"
    "      --truncate           Truncate inputs that exceed the context length (embedding models)\n"
    "      --dimensions int     Truncate output embeddings to the given dimension (embedding models)\n"
    "      --verbose            Show timings for response\n";

// The embedding of `text` from /api/embed, printed as a JSON array.
int print_embedding(const HttpClient& client, const RunOptions& opts, const std::string& text,
                    const nlohmann::json& truncate, int64_t dimensions) {
  nlohmann::json req{{"model", opts.model}, {"input", text}};
  if (!opts.keep_alive.empty()) req["keep_alive"] = opts.keep_alive;
  if (!truncate.is_null()) req["truncate"] = truncate;
  if (dimensions > 0) req["dimensions"] = dimensions;
  auto resp = client.call("POST", "/api/embed", req);
  if (!resp.ok()) return report_error(resp.status());
  const nlohmann::json embeddings = resp->value("embeddings", nlohmann::json::array());
  if (!embeddings.is_array() || embeddings.empty()) return report_error(internal_error("no embeddings generated"));
  for (const nlohmann::json& e : embeddings) std::printf("%s\n", e.dump().c_str());
  return 0;
}

bool has_capability(const nlohmann::json& show, std::string_view name) {
  for (const auto& c : show.value("capabilities", nlohmann::json::array())) {
    if (c.is_string() && c.get<std::string>() == name) return true;
  }
  return false;
}

std::string param_count(const nlohmann::json& details) { return details.value("parameter_size", ""); }

void add_section(std::string& out, const std::string& title,
                 const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  out += "  " + title + "\n";
  std::istringstream table(ui::format_table(rows));
  for (std::string line; std::getline(table, line);) out += "    " + line + "\n";
  out += "\n";
}

// The first two lines of a long text, then "..." as Ollama shows System and License.
std::vector<std::vector<std::string>> text_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (rows.size() == 2) {
      rows.push_back({"..."});
      break;
    }
    if (!line.empty()) rows.push_back({line});
  }
  return rows;
}

std::string scalar_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string format_show_info(const nlohmann::json& show, bool verbose) {
  std::string out;
  const nlohmann::json details = show.value("details", nlohmann::json::object());
  const nlohmann::json info = show.value("model_info", nlohmann::json::object());
  const std::string arch = info.value("general.architecture", details.value("family", ""));
  std::vector<std::vector<std::string>> model = {{"architecture", arch},
                                                 {"parameters", param_count(details)}};
  if (info.contains(arch + ".context_length"))
    model.push_back({"context length", scalar_text(info[arch + ".context_length"])});
  if (info.contains(arch + ".embedding_length")) {
    model.push_back({"embedding length", scalar_text(info[arch + ".embedding_length"])});
  }
  model.push_back({"quantization", details.value("quantization_level", "")});
  if (show.contains("requires")) model.push_back({"requires", scalar_text(show["requires"])});
  add_section(out, "Model", model);
  std::vector<std::vector<std::string>> caps;
  for (const auto& c : show.value("capabilities", nlohmann::json::array())) caps.push_back({scalar_text(c)});
  add_section(out, "Capabilities", caps);
  std::vector<std::vector<std::string>> params;
  std::istringstream plines(show.value("parameters", ""));
  for (std::string line; std::getline(plines, line);) {
    const size_t sp = line.find_first_of(" \t");
    if (sp == std::string::npos) continue;
    const size_t v = line.find_first_not_of(" \t", sp);
    params.push_back({line.substr(0, sp), v == std::string::npos ? "" : line.substr(v)});
  }
  add_section(out, "Parameters", params);
  add_section(out, "System", text_rows(show.value("system", "")));
  add_section(out, "License", text_rows(show.value("license", "")));
  if (verbose) {
    std::vector<std::vector<std::string>> meta;
    for (const auto& [k, v] : info.items()) meta.push_back({k, scalar_text(v)});
    add_section(out, "Metadata", meta);
  }
  return out;
}

int show_model_over_http(const std::string& name, std::string_view selector, bool verbose) {
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  const auto show = client->call("POST", "/api/show", {{"model", name}, {"verbose", verbose}});
  if (!show.ok()) return report_error(show.status());
  if (selector.empty()) {
    std::fputs(format_show_info(*show, verbose).c_str(), stdout);
    return 0;
  }
  const std::string key(selector);
  std::printf("%s\n", show->value(key, std::string()).c_str());
  return 0;
}

int run_run(int argc, char** argv) {
  RunOptions opts;
  std::vector<std::string> words;
  bool insecure = false;
  nlohmann::json truncate;  // null: the server's default
  int64_t dimensions = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-h" || a == "--help") return std::fputs(kUsage, stdout), 0;
    if (a == "--verbose") {
      opts.verbose = true;
    } else if (a == "--nowordwrap") {
      opts.wordwrap = false;
    } else if (a == "--hidethinking") {
      opts.hide_thinking = true;
    } else if (a == "--insecure") {
      insecure = true;
    } else if (a == "--truncate" || a == "--truncate=true" || a == "--truncate=false") {
      truncate = a != "--truncate=false";
    } else if ((a == "--dimensions" && has_value) || a.starts_with("--dimensions=")) {
      const std::string v = a == "--dimensions" ? std::string(argv[++i]) : std::string(a.substr(13));
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0) {
        std::fprintf(stderr, "Error: invalid argument \"%s\" for \"--dimensions\" flag\n", v.c_str());
        return 1;
      }
      dimensions = n;
    } else if (a == "--think") {
      opts.think = true;
    } else if (a.starts_with("--think=")) {
      const std::string v(a.substr(8));
      opts.think = v == "true"    ? nlohmann::json(true)
                   : v == "false" ? nlohmann::json(false)
                                  : nlohmann::json(v);
    } else if ((a == "--format" || a == "--keepalive") && has_value) {
      (a == "--format" ? opts.format : opts.keep_alive) = argv[++i];
    } else if (a.starts_with("--format=")) {
      opts.format = a.substr(9);
    } else if (a.starts_with("--keepalive=")) {
      opts.keep_alive = a.substr(12);
    } else if (a.starts_with("-") && words.empty()) {
      std::fprintf(stderr, "Error: unknown flag: %s\n%s", argv[i], kUsage);
      return 1;
    } else {
      words.emplace_back(a);
    }
  }
  if (words.empty()) {
    std::fprintf(stderr, "Error: requires at least 1 arg(s), only received 0\n%s", kUsage);
    return 1;
  }
  if (!opts.format.empty() && opts.format != "json") {
    return report_error(invalid_argument("invalid format \"" + opts.format + "\": only 'json' is supported"));
  }
  opts.model = words[0];
  words.erase(words.begin());
  if (isatty(STDIN_FILENO) == 0) {
    std::string piped((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    words.insert(words.begin(), std::move(piped));
    opts.wordwrap = false;
  }
  auto client = connect_or_start();
  if (!client.ok()) return report_error(client.status());
  auto show = client->call("POST", "/api/show", {{"model", opts.model}});
  if (!show.ok() && show.status().code() == Code::kNotFound) {
    const Status pulled = pull_model(*client, opts.model, insecure);
    if (!pulled.is_ok()) return report_error(pulled);
    show = client->call("POST", "/api/show", {{"model", opts.model}});
  }
  if (!show.ok()) return report_error(show.status());
  if (has_capability(*show, "embedding") && !has_capability(*show, "completion")) {
    std::string text;
    for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
    if (text.empty()) {
      return report_error(invalid_argument("embedding models require input text. Usage: paddock run " +
                                           opts.model + " \"your text here\""));
    }
    return print_embedding(*client, opts, text, truncate, dimensions);
  }
  if (!words.empty()) {
    std::string prompt;
    for (const std::string& w : words) prompt += (prompt.empty() ? "" : " ") + w;
    return run_once(*client, opts, prompt);
  }
  return run_interactive(*client, opts);
}

}  // namespace paddock::cli
