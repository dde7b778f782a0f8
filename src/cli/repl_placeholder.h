// Ollama's grey `Send a message (/? for help)` after an empty `>>> ` prompt. It is drawn
// before libedit draws the same prompt over its start, so libedit does not know it is there
// (libedit prints what a prompt marks with RL_PROMPT_START_IGNORE only while redrawing); the
// key reader installed here (libedit's rl_getc_function) erases it once the first key arrives.
//   install_placeholder_key_reader();   // before rl_initialize()
//   show_placeholder(">>> "); readline(">>> ");
#pragma once

#include <string_view>

namespace paddock::cli {

inline constexpr std::string_view kPlaceholder = "Send a message (/? for help)";

// Draws `prompt` and the hint, the cursor back at the line's start; the next key read
// erases the hint.
void show_placeholder(std::string_view prompt);

// Installs the key reader: one character per call, a whole UTF-8 sequence decoded to its
// code point (libedit takes the int as a wchar_t); reads interrupted by a signal other than
// SIGINT are retried, so a terminal resize does not end the line.
void install_placeholder_key_reader();

}  // namespace paddock::cli
