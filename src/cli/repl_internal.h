// Pieces shared by repl_stream.cpp, repl.cpp and cmd_run.cpp (not a public API).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/http_client.h"
#include "cli/repl.h"

namespace paddock::cli {

struct StreamedAnswer {
  std::string content, thinking;
  nlohmann::json final_chunk;  // the done:true object (metrics)
  bool cancelled = false;      // stopped by Ctrl+C
};

// SIGINT sets a flag instead of ending the process; take_interrupt() reads and clears it.
void install_sigint_handler();
bool take_interrupt();
bool interrupt_pending();  // without clearing it
// model, stream, format, keep_alive, think, options of a generate/chat request.
nlohmann::json request_common(const RunOptions& opts);
Result<StreamedAnswer> stream_answer(const HttpClient& client, const std::string& path,
                                     const nlohmann::json& body, const RunOptions& opts);

}  // namespace paddock::cli
