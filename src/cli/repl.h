// `paddock run`'s two modes: one streamed answer (a prompt on the command line or piped in;
// /api/generate) and the interactive prompt (/api/chat with the conversation so far; libedit
// line editing, history in ~/.paddock/history, """ multi-line input, /set /show /load /save
// /clear /bye /?). Ctrl+C stops the answer being streamed; Ctrl+D on an empty line leaves.
//   RunOptions o; o.model = "stories"; return run_interactive(client, o);
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/http_client.h"

namespace paddock::cli {

struct RunOptions {
  std::string model;
  std::string format;  // "" or "json"
  bool verbose = false;
  nlohmann::json think;  // null = the model's default; true/false or "low"|"medium"|"high"|"max"
  bool hide_thinking = false;
  bool wordwrap = true;
  std::string keep_alive;  // "" = the server's default
  nlohmann::json options = nlohmann::json::object();
  std::string system;
};

// Streams one answer to `prompt` to stdout; returns the exit code.
int run_once(const HttpClient& client, const RunOptions& opts, const std::string& prompt);
// Loads the model (a spinner while it loads), then runs the prompt; keys typed meanwhile are
// kept for the first line.
int run_interactive(const HttpClient& client, RunOptions opts);

}  // namespace paddock::cli
