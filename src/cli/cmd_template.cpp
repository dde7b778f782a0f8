// `paddock template render`: renders a chat template for a conversation, byte-exact, with
// nothing added. Go templates get Ollama's .Messages/.Tools; Jinja templates get Hugging
// Face's apply_chat_template context. `--model FILE.gguf` renders the GGUF's own template.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "chat/jinja/jinja.h"
#include "chat/render.h"
#include "cli/commands.h"
#include "cli/model_template.h"

namespace paddock::cli {

namespace {

struct TemplateArgs {
  std::string gotmpl, jinja, model, messages, tools, bos, eos, date;
  bool add_generation_prompt = true;
};

constexpr const char* kUsage =
    "Usage: paddock template render (--gotmpl FILE | --jinja FILE | --model NAME|FILE.gguf) --messages FILE.json\n"
    "         [--tools FILE.json] [--no-generation-prompt] [--bos TEXT] [--eos TEXT] [--date YYYY-MM-DD]\n";

std::optional<TemplateArgs> parse_args(int argc, char** argv) {
  TemplateArgs a;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "--gotmpl") ok = value(&a.gotmpl);
    else if (arg == "--jinja") ok = value(&a.jinja);
    else if (arg == "--model") ok = value(&a.model);
    else if (arg == "--messages") ok = value(&a.messages);
    else if (arg == "--tools") ok = value(&a.tools);
    else if (arg == "--bos") ok = value(&a.bos);
    else if (arg == "--eos") ok = value(&a.eos);
    else if (arg == "--date") ok = value(&a.date);
    else if (arg == "--no-generation-prompt") a.add_generation_prompt = false;
    else {
      std::fprintf(stderr, "Error: unknown flag %.*s\n", static_cast<int>(arg.size()), arg.data());
      return std::nullopt;
    }
    if (!ok) {
      std::fprintf(stderr, "Error: %.*s needs a value\n", static_cast<int>(arg.size()), arg.data());
      return std::nullopt;
    }
  }
  const int sources = !a.gotmpl.empty() + !a.jinja.empty() + !a.model.empty();
  if (sources != 1 || a.messages.empty()) return std::nullopt;
  return a;
}

Result<std::string> render_jinja(const std::string& source, const std::string& messages_text,
                                 const std::string& tools_text, const TemplateArgs& a) {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  auto messages = nlohmann::ordered_json::parse(messages_text, nullptr, false);
  if (messages.is_discarded() || !messages.is_array()) return invalid_argument("--messages: expected a JSON array");
  ctx["messages"] = std::move(messages);
  if (!tools_text.empty()) {
    auto tools = nlohmann::ordered_json::parse(tools_text, nullptr, false);
    if (tools.is_discarded() || !tools.is_array()) return invalid_argument("--tools: expected a JSON array");
    ctx["tools"] = std::move(tools);
  }
  ctx["add_generation_prompt"] = a.add_generation_prompt;
  ctx["bos_token"] = a.bos;
  ctx["eos_token"] = a.eos;
  jinja::Options opts;
  opts.date = a.date;
  PADDOCK_ASSIGN(auto tmpl, jinja::Template::parse(source, opts));
  return tmpl.render(ctx);
}

Result<std::string> render(TemplateArgs a) {
  PADDOCK_ASSIGN(std::string messages, read_file(a.messages));
  std::string tools;
  if (!a.tools.empty()) {
    PADDOCK_ASSIGN(tools, read_file(a.tools));
  }
  if (!a.model.empty()) {
    PADDOCK_ASSIGN(ModelTemplate mt, model_template(a.model));
    if (mt.is_go) {
      chat::RenderOptions opts;
      opts.date = a.date;
      return chat::render_chat_json(mt.text, messages, tools, opts);
    }
    if (a.bos.empty()) a.bos = mt.bos_token;
    if (a.eos.empty()) a.eos = mt.eos_token;
    return render_jinja(mt.text, messages, tools, a);
  }
  if (!a.gotmpl.empty()) {
    PADDOCK_ASSIGN(std::string text, read_file(a.gotmpl));
    chat::RenderOptions opts;
    opts.date = a.date;
    return chat::render_chat_json(text, messages, tools, opts);
  }
  PADDOCK_ASSIGN(std::string text, read_file(a.jinja));
  return render_jinja(text, messages, tools, a);
}

}  // namespace

int run_template(int argc, char** argv) {
  if (argc == 2 && (std::string_view(argv[1]) == "-h" || std::string_view(argv[1]) == "--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc < 2 || std::string_view(argv[1]) != "render") {
    std::fputs(kUsage, stderr);
    return 1;
  }
  auto args = parse_args(argc - 2, argv + 2);
  if (!args) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  Result<std::string> out = render(std::move(*args));
  if (!out.ok()) {
    std::fprintf(stderr, "Error: %s\n", out.status().message().c_str());
    return 1;
  }
  std::fwrite(out->data(), 1, out->size(), stdout);
  return 0;
}

}  // namespace paddock::cli
