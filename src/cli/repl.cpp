// The interactive prompt of `paddock run` (Ollama's cmd/interactive.go, over libedit).
#include <editline/readline.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/env.h"
#include "cli/client_ops.h"
#include "cli/repl.h"
#include "cli/repl_internal.h"
#include "cli/repl_placeholder.h"
#include "cli/ui/repl_input.h"
#include "store/params.h"

namespace paddock::cli {

namespace {

constexpr int kHistoryEntries = 100;

std::string history_path() {
  const char* home = std::getenv("HOME");
  const std::filesystem::path dir =
      std::filesystem::path(home != nullptr && *home ? home : "/tmp") / ".paddock";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return (dir / "history").string();
}

// While the prompt is not reading a line (a model loads, an answer streams), keys typed
// ahead stay raw bytes for the next line, unechoed, as in Ollama. In the terminal's canonical
// mode a Ctrl+D typed then would be an end-of-file that libedit reads as a NUL byte, which
// makes it quote the next key: the next Ctrl+D would be inserted instead of leaving.
// Ctrl+C still signals (ISIG stays on). The terminal's settings come back on destruction,
// and on SIGTERM, SIGHUP or SIGQUIT before the signal takes its default course, so a killed
// session never leaves the shell without echo; SIGCONT (after Ctrl+Z) takes the mode again.
// One instance at a time.
class TypeaheadMode {
 public:
  TypeaheadMode() {
    if (isatty(STDIN_FILENO) == 0 || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    raw_ = saved_;
    raw_.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw_.c_cc[VMIN] = 1;
    raw_.c_cc[VTIME] = 0;
    tty_ = true;
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_fatal;
    for (size_t i = 0; i < kFatal.size(); ++i) sigaction(kFatal[i], &sa, &old_[i]);
    sa.sa_handler = on_continue;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCONT, &sa, &old_cont_);
    enter();
  }
  ~TypeaheadMode() {
    if (!tty_) return;
    tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_);
    for (size_t i = 0; i < kFatal.size(); ++i) sigaction(kFatal[i], &old_[i], nullptr);
    sigaction(SIGCONT, &old_cont_, nullptr);
  }
  TypeaheadMode(const TypeaheadMode&) = delete;
  TypeaheadMode& operator=(const TypeaheadMode&) = delete;

  // Again after each line: libedit leaves the terminal in canonical mode when it returns.
  void enter() const {
    if (tty_) tcsetattr(STDIN_FILENO, TCSADRAIN, &raw_);
  }

 private:
  static constexpr std::array<int, 3> kFatal = {SIGTERM, SIGHUP, SIGQUIT};
  // Read by the handlers: set before they are installed, unchanged while they are.
  static inline termios saved_{};
  static inline termios raw_{};

  static void on_fatal(int sig) {  // tcsetattr, signal and raise are async-signal-safe
    tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    signal(sig, SIG_DFL);
    raise(sig);
  }
  static void on_continue(int) { tcsetattr(STDIN_FILENO, TCSANOW, &raw_); }

  bool tty_ = false;
  std::array<struct sigaction, kFatal.size()> old_{};
  struct sigaction old_cont_ {};
};

// Loads opts.model on the server (a chat without messages), a spinner showing meanwhile.
Status preload(const HttpClient& client, const RunOptions& opts) {
  nlohmann::json body = request_common(opts);
  body["messages"] = nlohmann::json::array();
  return stream_answer(client, "/api/chat", body, opts).status();
}

// One line from the terminal (`>>> ` with Ollama's hint, or `... ` inside a """ block);
// nullopt on Ctrl+D. Ctrl+C clears the line and says how to leave.
std::optional<std::string> read_line(bool continuation, const TypeaheadMode& typeahead) {
  for (;;) {
    errno = 0;
    if (!continuation) show_placeholder(">>> ");
    char* raw = readline(continuation ? "... " : ">>> ");
    typeahead.enter();
    if (take_interrupt()) {
      std::free(raw);
      std::fputs("\x1b[K\nUse Ctrl + d or /bye to exit.\n", stdout);  // erases the hint, if shown
      continue;
    }
    if (raw == nullptr) return std::nullopt;
    std::string line(raw);
    std::free(raw);
    return line;
  }
}

class Session {
 public:
  Session(const HttpClient& client, RunOptions opts, const TypeaheadMode& typeahead)
      : client_(client), opts_(std::move(opts)), typeahead_(typeahead) {}
  int loop();

 private:
  // false = leave the prompt
  bool handle(const ui::ReplCommand& c);
  void chat(const std::string& text);
  void show(const std::string& what);
  void set_parameter(const std::vector<std::string>& args);
  void load(const std::string& model);
  void save(const std::string& model);

  const HttpClient& client_;
  RunOptions opts_;
  const TypeaheadMode& typeahead_;
  nlohmann::json messages_ = nlohmann::json::array();
  bool history_ = true;
  std::string template_;
};

int Session::loop() {
  const std::string hist = history_path();
  history_ = !env_flag("NOHISTORY");
  using_history();
  stifle_history(kHistoryEntries);
  if (history_) read_history(hist.c_str());
  ui::MultilineCollector multiline;
  for (;;) {
    const auto line = read_line(multiline.open(), typeahead_);
    if (!line) {
      std::fputs("\n", stdout);
      break;
    }
    if (!multiline.feed(*line)) continue;
    const std::string text = multiline.take();
    if (text.find_first_not_of(" \t\n") == std::string::npos) continue;
    if (history_) {
      add_history(text.c_str());
      write_history(hist.c_str());
    }
    if (!handle(ui::parse_repl_command(text))) break;
  }
  return 0;
}

bool Session::handle(const ui::ReplCommand& c) {
  using ui::ReplKind;
  const auto say = [](const std::string& s) { std::printf("%s\n", s.c_str()); };
  switch (c.kind) {
    case ReplKind::kMessage: chat(c.text); break;
    case ReplKind::kSetParameter: set_parameter(c.args); break;
    case ReplKind::kSetSystem:
      opts_.system = c.text;
      say("Set system message.");
      break;
    case ReplKind::kSetTemplate:
      template_ = c.text;
      say("Set prompt template.");
      break;
    case ReplKind::kSetFormat:
      opts_.format = "json";
      say("Set format to 'json' mode.");
      break;
    case ReplKind::kSetNoFormat:
      opts_.format.clear();
      say("Disabled format.");
      break;
    case ReplKind::kSetVerbose:
      opts_.verbose = true;
      say("Set 'verbose' mode.");
      break;
    case ReplKind::kSetQuiet:
      opts_.verbose = false;
      say("Set 'quiet' mode.");
      break;
    case ReplKind::kSetThink:
      opts_.think = c.args.empty() ? nlohmann::json(true) : nlohmann::json(c.args[0]);
      say(c.args.empty() ? "Set 'think' mode." : "Set 'think' mode to '" + c.args[0] + "'.");
      break;
    case ReplKind::kSetNoThink:
      opts_.think = false;
      say("Set 'nothink' mode.");
      break;
    case ReplKind::kSetWordwrap:
      opts_.wordwrap = true;
      say("Set 'wordwrap' mode.");
      break;
    case ReplKind::kSetNoWordwrap:
      opts_.wordwrap = false;
      say("Set 'nowordwrap' mode.");
      break;
    case ReplKind::kSetHistory:
      history_ = true;
      say("Set 'history' mode.");
      break;
    case ReplKind::kSetNoHistory:
      history_ = false;
      say("Set 'nohistory' mode.");
      break;
    case ReplKind::kShow: show(c.args[0]); break;
    case ReplKind::kLoad: load(c.args[0]); break;
    case ReplKind::kSave: save(c.args[0]); break;
    case ReplKind::kClear:
      messages_ = nlohmann::json::array();
      say("Cleared session context");
      break;
    case ReplKind::kList: {
      const Status s = print_model_list(client_, "");
      if (!s.is_ok()) say("error: " + s.message());
      break;
    }
    case ReplKind::kBye: return false;
    case ReplKind::kHelp: std::fputs(ui::repl_help(c.args.empty() ? "" : c.args[0]).c_str(), stdout); break;
    case ReplKind::kUsage:
    case ReplKind::kUnknown: say(c.text); break;
  }
  return true;
}

void Session::chat(const std::string& text) {
  nlohmann::json body = request_common(opts_);
  nlohmann::json messages = nlohmann::json::array();
  if (!opts_.system.empty()) messages.push_back({{"role", "system"}, {"content", opts_.system}});
  for (const auto& m : messages_) messages.push_back(m);
  messages.push_back({{"role", "user"}, {"content", text}});
  body["messages"] = messages;
  if (!template_.empty()) body["template"] = template_;
  const auto answer = stream_answer(client_, "/api/chat", body, opts_);
  if (!answer.ok()) {
    std::fprintf(stdout, "Error: %s\n", answer.status().message().c_str());
    return;
  }
  // A stopped answer is kept as far as it went, as Ollama does.
  messages_.push_back({{"role", "user"}, {"content", text}});
  nlohmann::json reply = {{"role", "assistant"}, {"content", answer->content}};
  if (!answer->thinking.empty()) reply["thinking"] = answer->thinking;
  messages_.push_back(reply);
}

void Session::show(const std::string& what) {
  const auto info = client_.call("POST", "/api/show", {{"model", opts_.model}});
  if (!info.ok()) {
    std::printf("error: couldn't get model: %s\n", info.status().message().c_str());
    return;
  }
  const auto field = [&](const char* key) { return info->value(key, std::string()); };
  if (what == "info") {
    std::fputs(format_show_info(*info, false).c_str(), stdout);
  } else if (what == "license") {
    const std::string s = field("license");
    std::printf("%s\n", s.empty() ? "No license was specified for this model." : s.c_str());
  } else if (what == "modelfile") {
    std::printf("%s\n", field("modelfile").c_str());
  } else if (what == "parameters") {
    const std::string p = field("parameters");
    if (p.empty() && opts_.options.empty()) std::printf("No parameters were specified for this model.\n");
    if (!p.empty()) std::printf("Model defined parameters:\n%s\n", p.c_str());
    if (!opts_.options.empty()) {
      std::printf("User defined parameters:\n");
      for (const auto& [k, v] : opts_.options.items()) std::printf("%-30s %s\n", k.c_str(), v.dump().c_str());
    }
  } else if (what == "system") {
    const std::string s = opts_.system.empty() ? field("system") : opts_.system;
    std::printf("%s\n", s.empty() ? "No system message was specified for this model." : s.c_str());
  } else if (what == "template") {
    const std::string s = template_.empty() ? field("template") : template_;
    std::printf("%s\n", s.empty() ? "No prompt template was specified for this model." : s.c_str());
  } else {
    std::printf("Unknown command '/show %s'. Type /? for help\n", what.c_str());
  }
}

void Session::set_parameter(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(ui::repl_parameter_help().c_str(), stdout);
    return;
  }
  store::Params params;
  std::string shown;
  for (size_t i = 1; i < args.size(); ++i) {
    const Status s = params.set(args[0], args[i]);
    if (!s.is_ok()) {
      std::printf("Couldn't set parameter: %s\n", s.message().c_str());
      return;
    }
    shown += (i > 1 ? ", " : "") + args[i];
  }
  const nlohmann::json typed = nlohmann::json::parse(params.to_json(), nullptr, false);
  if (typed.is_object()) opts_.options.update(typed);
  std::printf("Set parameter '%s' to '%s'\n", args[0].c_str(), shown.c_str());
}

void Session::load(const std::string& model) {
  const auto info = client_.call("POST", "/api/show", {{"model", model}});
  if (!info.ok()) {
    if (info.status().code() == Code::kNotFound) {
      std::printf("Couldn't find model '%s'\n", model.c_str());
    } else {
      std::printf("error: %s\n", info.status().message().c_str());
    }
    return;
  }
  opts_.model = model;
  messages_ = nlohmann::json::array();
  std::printf("Loading model '%s'\n", model.c_str());
  const Status loaded = preload(client_, opts_);
  if (!loaded.is_ok()) std::printf("error: %s\n", loaded.message().c_str());
}

void Session::save(const std::string& model) {
  nlohmann::json req = {{"model", model}, {"from", opts_.model}, {"stream", false}};
  if (!opts_.system.empty()) req["system"] = opts_.system;
  if (!template_.empty()) req["template"] = template_;
  if (!opts_.options.empty()) req["parameters"] = opts_.options;
  if (!messages_.empty()) {
    req["messages"] = nlohmann::json::array();
    for (const auto& m : messages_)
      req["messages"].push_back({{"role", m["role"]}, {"content", m["content"]}});
  }
  const auto r = client_.call("POST", "/api/create", req);
  if (!r.ok()) {
    std::printf("error: %s\n", r.status().message().c_str());
    return;
  }
  std::printf("Created new model '%s'\n", model.c_str());
}

}  // namespace

int run_interactive(const HttpClient& client, RunOptions opts) {
  std::setlocale(LC_CTYPE, "");  // libedit edits multibyte (UTF-8) lines only in such a locale
  install_placeholder_key_reader();
  rl_initialize();  // first: libedit turns line editing off if it starts with echo off
  const TypeaheadMode typeahead;
  install_sigint_handler();
  // Load the model before the first prompt so the wait shows up as a spinner here.
  const Status loaded = preload(client, opts);
  if (!loaded.is_ok()) return report_error(loaded);
  Session session(client, std::move(opts), typeahead);
  return session.loop();
}

}  // namespace paddock::cli
