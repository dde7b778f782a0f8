// What the interactive prompt does with a line of input, separated from the terminal so it
// can be tested: the `"""` multi-line collector and the parser of `/` commands (/set, /show,
// /load, /save, /clear, /bye, /?), with Ollama's help texts.
//   MultilineCollector m; if (m.feed(line)) send(m.take());
//   ReplCommand c = parse_repl_command(text); switch (c.kind) ...
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paddock::cli::ui {

// A line starting with `"""` opens a multi-line message (text after the quotes kept); a
// line ending with `"""` closes it (text before kept); `"""text"""` is a one-line message.
// `/set system """...` and `/set template """...` also span lines; their text is returned
// whole, quotes included, for parse_repl_command.
class MultilineCollector {
 public:
  // True when a complete message is ready (take() it); false while more lines are needed.
  bool feed(std::string_view line);
  bool open() const { return open_; }
  std::string take();

 private:
  bool open_ = false;
  bool keep_closing_quotes_ = false;  // a /set command's value
  std::string text_;
};

enum class ReplKind {
  kMessage,       // not a command: send `text` to the model
  kSetParameter,  // args = {name, value...}; no args = list the parameters
  kSetSystem,     // text
  kSetTemplate,   // text
  kSetFormat,     // args = {"json"}
  kSetNoFormat,
  kSetVerbose,
  kSetQuiet,
  kSetThink,  // args = {} or {level}
  kSetNoThink,
  kSetWordwrap,
  kSetNoWordwrap,
  kSetHistory,
  kSetNoHistory,
  kShow,  // args = {what}
  kLoad,  // args = {model}
  kSave,  // args = {model}
  kClear,
  kList,
  kBye,
  kHelp,   // args = {} or {topic}: "set", "show", "shortcuts"
  kUsage,  // a command used wrongly: print `text`
  kUnknown,
};

struct ReplCommand {
  ReplKind kind = ReplKind::kMessage;
  std::vector<std::string> args;
  std::string text;
};

ReplCommand parse_repl_command(std::string_view line);

// Ollama's help texts; topic "" = the main list.
std::string repl_help(std::string_view topic);
std::string repl_parameter_help();

}  // namespace paddock::cli::ui
