// `paddock show FILE.gguf [--verbose|-v] [--json]`: what `ollama show` prints, read from a local
// GGUF file. An argument that is not a file path is a model name, shown by the server.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/client_ops.h"
#include "cli/commands.h"
#include "gguf/gguf.h"
#include "gguf/summary.h"

namespace paddock::cli {

namespace {

constexpr const char* kUsage =
    "Usage:\n  paddock show FILE.gguf|MODEL [--verbose|-v] [--json]\n"
    "  paddock show MODEL [--license|--modelfile|--parameters|--system|--template]\n";
constexpr size_t kArrayItemsShown = 3;
constexpr size_t kStringBytesShown = 120;

struct ShowOptions {
  std::string target;
  std::string selector;  // "", or license/modelfile/parameters/system/template (model names)
  bool verbose = false;
  bool json = false;
};

// Strings are printed on one line: control characters escaped, long ones cut.
std::string escaped(std::string_view s, bool quote) {
  std::string out = quote ? "\"" : "";
  const std::string_view shown = s.substr(0, kStringBytesShown);
  for (const char c : shown) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  if (quote) out += '"';
  if (shown.size() < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string format_value(const gguf::Value& v, bool in_array) {
  using gguf::ValueType;
  switch (v.type) {
    case ValueType::kString: return escaped(v.s, in_array);
    case ValueType::kBool: return v.u ? "true" : "false";
    case ValueType::kF32:
    case ValueType::kF64: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", v.f);
      return buf;
    }
    case ValueType::kArray: {
      std::string out = "[";
      const size_t n = v.items.size();
      const size_t shown = n > 2 * kArrayItemsShown ? kArrayItemsShown : n;
      for (size_t k = 0; k < shown; ++k) out += (k ? ", " : "") + format_value(v.items[k], true);
      if (shown < n) out += ", ... (" + std::to_string(n) + " items)";
      return out + "]";
    }
    default:
      if (auto i = v.as_i64()) return std::to_string(*i);
      return std::to_string(v.u);
  }
}

std::string shape(const gguf::TensorInfo& t) {
  std::string out = "[";
  for (size_t d = 0; d < t.ne.size(); ++d) out += (d ? ", " : "") + std::to_string(t.ne[d]);
  return out + "]";
}

void row(std::string_view name, const std::string& value, int width = 20) {
  std::printf("    %-*.*s%s\n", width, static_cast<int>(name.size()), name.data(), value.c_str());
}

template <typename T>
std::string or_dash(const std::optional<T>& v) {
  if (!v) return "-";
  if constexpr (std::is_same_v<T, std::string>) {
    return *v;
  } else {
    return std::to_string(*v);
  }
}

void print_text(const gguf::File& f, const gguf::ModelSummary& s, bool verbose) {
  std::printf("  Model\n");
  row("architecture", or_dash(s.architecture));
  row("parameters", gguf::human_count(s.parameters));
  row("context length", or_dash(s.context_length));
  row("embedding length", or_dash(s.embedding_length));
  row("quantization", s.quantization.empty() ? "-" : s.quantization);
  std::printf("\n  Tokenizer\n");
  row("model", or_dash(s.tokenizer_model));
  row("vocab size", or_dash(s.vocab_size));
  row("chat template", s.chat_template ? "yes" : "no");
  if (s.license) {
    std::printf("\n  License\n    %s\n", escaped(*s.license, false).c_str());
  }
  if (!verbose) return;
  std::printf("\n  Metadata\n");
  size_t width = 20;
  for (const gguf::KeyValue& kv : f.metadata()) width = std::max(width, kv.key.size() + 2);
  for (const gguf::KeyValue& kv : f.metadata()) {
    row(kv.key, format_value(kv.value, false), static_cast<int>(std::min<size_t>(width, 80)));
  }
  std::printf("\n  Tensors\n");
  for (const gguf::TensorInfo& t : f.tensors()) {
    std::printf("    %-40s %-8s %s\n", escaped(t.name, false).c_str(),
                std::string(dtype_name(t.type)).c_str(), shape(t).c_str());
  }
}

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

void print_json(const gguf::ModelSummary& s) {
  nlohmann::ordered_json types = nlohmann::ordered_json::object();
  for (const auto& [name, count] : s.tensor_types) types[name] = count;
  const nlohmann::ordered_json j = {
      {"architecture", or_null(s.architecture)},
      {"parameters", s.parameters},
      {"context_length", or_null(s.context_length)},
      {"embedding_length", or_null(s.embedding_length)},
      {"file_type", or_null(s.file_type)},
      {"tensor_types", types},
      {"tokenizer", {{"model", or_null(s.tokenizer_model)}, {"vocab_size", or_null(s.vocab_size)}}},
      {"chat_template", s.chat_template},
      {"license", or_null(s.license)},
  };
  // Strings from the file may be invalid UTF-8: replace rather than throw.
  std::printf("%s\n", j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
}

int show_file(const ShowOptions& o) {
  auto f = gguf::File::open(o.target, gguf::Layout::kAsStored);
  if (!f.ok()) {
    std::fprintf(stderr, "Error: %s\n", f.status().message().c_str());
    return 1;
  }
  const gguf::ModelSummary s = gguf::summarize(**f);
  if (o.json) {
    print_json(s);
  } else {
    print_text(**f, s, o.verbose);
  }
  return 0;
}

// Model names are shown by the server, like `ollama show`.
int show_model_name(const ShowOptions& o) {
  if (o.json) {
    std::fprintf(stderr, "Error: --json is for GGUF files; for a model name use /api/show\n");
    return 1;
  }
  return show_model_over_http(o.target, o.selector, o.verbose);
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() >= 5 && s.compare(s.size() - 5, 5, ".gguf") == 0);
}

}  // namespace

int run_show(int argc, char** argv) {
  ShowOptions o;
  for (int k = 1; k < argc; ++k) {
    const std::string_view a = argv[k];
    if (a == "-v" || a == "--verbose") {
      o.verbose = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--license" || a == "--modelfile" || a == "--parameters" || a == "--system" ||
               a == "--template") {
      o.selector = a.substr(2);
    } else if (a == "-h" || a == "--help") {
      std::printf("Show information about a model (a GGUF file or a model name)\n\n%s", kUsage);
      return 0;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "Error: unknown flag: %s\n%s", argv[k], kUsage);
      return 1;
    } else if (o.target.empty()) {
      o.target = a;
    } else {
      std::fprintf(stderr, "Error: show takes one model or file, found '%s' and '%s'\n%s", o.target.c_str(),
                   argv[k], kUsage);
      return 1;
    }
  }
  if (o.target.empty()) {
    std::fprintf(stderr, "Error: show needs a model name or a GGUF file\n%s", kUsage);
    return 1;
  }
  std::error_code ec;
  if (std::filesystem::exists(o.target, ec) || looks_like_path(o.target)) return show_file(o);
  return show_model_name(o);
}

}  // namespace paddock::cli
