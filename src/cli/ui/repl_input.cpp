#include "cli/ui/repl_input.h"

namespace paddock::cli::ui {

namespace {

constexpr std::string_view kQuotes = R"(""")";

std::vector<std::string> split_fields(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

// The text after the first `n` fields, with surrounding spaces and `"` quotes removed.
std::string rest_after_fields(std::string_view s, size_t n) {
  size_t i = 0;
  for (size_t f = 0; f < n; ++f) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
  }
  std::string_view rest = s.substr(i);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  if (rest.size() >= 2 * kQuotes.size() && rest.starts_with(kQuotes) && rest.ends_with(kQuotes)) {
    rest = rest.substr(kQuotes.size(), rest.size() - 2 * kQuotes.size());
  } else if (rest.size() >= 2 && rest.front() == '"' && rest.back() == '"') {
    rest = rest.substr(1, rest.size() - 2);
  }
  return std::string(rest);
}

ReplCommand make(ReplKind kind, std::vector<std::string> args = {}, std::string text = {}) {
  return ReplCommand{kind, std::move(args), std::move(text)};
}

ReplCommand parse_set(const std::vector<std::string>& f, std::string_view line) {
  if (f.size() < 2) return make(ReplKind::kHelp, {"set"});
  const std::string& what = f[1];
  if (what == "parameter") {
    if (f.size() == 2) return make(ReplKind::kSetParameter);
    if (f.size() == 3) return make(ReplKind::kUsage, {}, "Usage: /set parameter <name> <value>");
    return make(ReplKind::kSetParameter, std::vector<std::string>(f.begin() + 2, f.end()));
  }
  if (what == "system" || what == "template") {
    return make(what == "system" ? ReplKind::kSetSystem : ReplKind::kSetTemplate, {},
                rest_after_fields(line, 2));
  }
  if (what == "format") {
    if (f.size() != 3 || f[2] != "json")
      return make(ReplKind::kUsage, {}, "Invalid or missing format. For 'json' mode use '/set format json'");
    return make(ReplKind::kSetFormat, {"json"});
  }
  if (what == "think") return make(ReplKind::kSetThink, std::vector<std::string>(f.begin() + 2, f.end()));
  struct Flag {
    std::string_view name;
    ReplKind kind;
  };
  static constexpr Flag kFlags[] = {
      {"noformat", ReplKind::kSetNoFormat}, {"verbose", ReplKind::kSetVerbose},
      {"quiet", ReplKind::kSetQuiet},       {"nothink", ReplKind::kSetNoThink},
      {"wordwrap", ReplKind::kSetWordwrap}, {"nowordwrap", ReplKind::kSetNoWordwrap},
      {"history", ReplKind::kSetHistory},   {"nohistory", ReplKind::kSetNoHistory},
  };
  for (const Flag& flag : kFlags) {
    if (what == flag.name) return make(flag.kind);
  }
  return make(ReplKind::kUsage, {}, "Unknown command '/set " + what + "'. Type /? for help");
}

}  // namespace

bool MultilineCollector::feed(std::string_view line) {
  if (open_) {
    if (line.ends_with(kQuotes)) {
      text_ += keep_closing_quotes_ ? line : line.substr(0, line.size() - kQuotes.size());
      open_ = false;
      return true;
    }
    text_ += line;
    text_ += '\n';
    return false;
  }
  if (line.starts_with("/set system ") || line.starts_with("/set template ")) {
    const size_t q = line.find(kQuotes);
    const bool opens = q != std::string_view::npos && line.find_first_not_of(' ', line.find(' ', 5)) == q &&
                       !(line.size() >= q + 2 * kQuotes.size() && line.ends_with(kQuotes));
    text_ = std::string(line);
    if (!opens) return true;
    text_ += '\n';
    open_ = true;
    keep_closing_quotes_ = true;
    return false;
  }
  if (!line.starts_with(kQuotes)) {
    text_ = std::string(line);
    return true;
  }
  std::string_view rest = line.substr(kQuotes.size());
  if (rest.ends_with(kQuotes)) {
    text_ = std::string(rest.substr(0, rest.size() - kQuotes.size()));
    return true;
  }
  text_ = std::string(rest) + "\n";
  open_ = true;
  keep_closing_quotes_ = false;
  return false;
}

std::string MultilineCollector::take() {
  std::string out = std::move(text_);
  text_.clear();
  open_ = false;
  return out;
}

ReplCommand parse_repl_command(std::string_view line) {
  std::string_view trimmed = line;
  while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t')) trimmed.remove_prefix(1);
  if (!trimmed.starts_with('/')) return make(ReplKind::kMessage, {}, std::string(line));
  const std::vector<std::string> f = split_fields(trimmed);
  const std::string& cmd = f[0];
  if (cmd == "/set") return parse_set(f, trimmed);
  if (cmd == "/show") {
    if (f.size() < 2) return make(ReplKind::kHelp, {"show"});
    return make(ReplKind::kShow, {f[1]});
  }
  if (cmd == "/load" || cmd == "/save") {
    if (f.size() != 2) return make(ReplKind::kUsage, {}, "Usage:\n  " + cmd + " <modelname>");
    return make(cmd == "/load" ? ReplKind::kLoad : ReplKind::kSave, {f[1]});
  }
  if (cmd == "/clear") return make(ReplKind::kClear);
  if (cmd == "/list") return make(ReplKind::kList);
  if (cmd == "/bye" || cmd == "/exit") return make(ReplKind::kBye);
  if (cmd == "/?" || cmd == "/help") {
    if (f.size() > 1) return make(ReplKind::kHelp, {f[1]});
    return make(ReplKind::kHelp);
  }
  // A path such as "/tmp/x" typed as a message is not a command.
  if (cmd.find('/', 1) != std::string::npos) return make(ReplKind::kMessage, {}, std::string(line));
  return make(ReplKind::kUnknown, {}, "Unknown command '" + cmd + "'. Type /? for help");
}

std::string repl_help(std::string_view topic) {
  if (topic == "set") {
    return "Available Commands:\n"
           "  /set parameter ...     Set a parameter\n"
           "  /set system <string>   Set system message\n"
           "  /set history           Enable history\n"
           "  /set nohistory         Disable history\n"
           "  /set wordwrap          Enable wordwrap\n"
           "  /set nowordwrap        Disable wordwrap\n"
           "  /set format json       Enable JSON mode\n"
           "  /set noformat          Disable formatting\n"
           "  /set verbose           Show LLM stats\n"
           "  /set quiet             Disable LLM stats\n"
           "  /set think             Enable thinking\n"
           "  /set nothink           Disable thinking\n";
  }
  if (topic == "show") {
    return "Available Commands:\n"
           "  /show info         Show details for this model\n"
           "  /show license      Show model license\n"
           "  /show modelfile    Show Modelfile for this model\n"
           "  /show parameters   Show parameters for this model\n"
           "  /show system       Show system message\n"
           "  /show template     Show prompt template\n";
  }
  if (topic == "shortcut" || topic == "shortcuts") {
    return "Available keyboard shortcuts:\n"
           "  Ctrl + a            Move to the beginning of the line (Home)\n"
           "  Ctrl + e            Move to the end of the line (End)\n"
           "   Alt + b            Move back (left) one word\n"
           "   Alt + f            Move forward (right) one word\n"
           "  Ctrl + k            Delete the sentence after the cursor\n"
           "  Ctrl + u            Delete the sentence before the cursor\n"
           "  Ctrl + w            Delete the word before the cursor\n"
           "\n"
           "  Ctrl + l            Clear the screen\n"
           "  Ctrl + c            Stop the model from responding\n"
           "  Ctrl + d            Exit paddock (/bye)\n";
  }
  return "Available Commands:\n"
         "  /set            Set session variables\n"
         "  /show           Show model information\n"
         "  /load <model>   Load a session or model\n"
         "  /save <model>   Save your current session\n"
         "  /clear          Clear session context\n"
         "  /bye            Exit\n"
         "  /?, /help       Help for a command\n"
         "  /? shortcuts    Help for keyboard shortcuts\n"
         "\n"
         "Use \"\"\" to begin a multi-line message.\n";
}

std::string repl_parameter_help() {
  return "Available Parameters:\n"
         "  /set parameter seed <int>             Random number seed\n"
         "  /set parameter num_predict <int>      Max number of tokens to predict\n"
         "  /set parameter top_k <int>            Pick from top k num of tokens\n"
         "  /set parameter top_p <float>          Pick token based on sum of probabilities\n"
         "  /set parameter min_p <float>          Pick token based on top token probability * min_p\n"
         "  /set parameter num_ctx <int>          Set the context size\n"
         "  /set parameter temperature <float>    Set creativity level\n"
         "  /set parameter repeat_penalty <float> How strongly to penalize repetitions\n"
         "  /set parameter repeat_last_n <int>    Set how far back to look for repetitions\n"
         "  /set parameter num_gpu <int>          The number of layers to send to the GPU\n"
         "  /set parameter stop <string> <string> ...   Set the stop parameters\n";
}

}  // namespace paddock::cli::ui
