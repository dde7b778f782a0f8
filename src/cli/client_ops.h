// Operations shared by the HTTP client commands (run, pull, show, list, the REPL), so each
// cmd_*.cpp stays one command. All talk to the server through HttpClient.
//   PADDOCK_TRY(pull_model(client, "stories", false));
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/http_client.h"

namespace paddock::cli {

// POST /api/pull with progress bars on stderr.
Status pull_model(const HttpClient& client, const std::string& name, bool insecure);
// `paddock list [PREFIX]`'s table on stdout.
Status print_model_list(const HttpClient& client, std::string_view prefix);
// `ollama show`'s sections (Model, Capabilities, Projector, Parameters, System, License,
// and Metadata when verbose) for an /api/show reply.
std::string format_show_info(const nlohmann::json& show, bool verbose);
// `paddock show MODEL [--license|--modelfile|--parameters|--system|--template] [-v]` over
// HTTP: selector is "" (the sections) or one of those flag names without dashes. Starts a
// server when none runs. Returns the exit code.
int show_model_over_http(const std::string& name, std::string_view selector, bool verbose);

}  // namespace paddock::cli
