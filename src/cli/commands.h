// The subcommand table of the `paddock` binary. Each command lives in its own cmd_<name>.cpp
// and has one row in kCommands (commands.cpp). A command gets its arguments after the name
// and returns the process exit code.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace paddock::cli {

using CommandFn = int (*)(int argc, char** argv);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFn run;
};

std::span<const Command> commands();
int run_help(int argc, char** argv);

// Declarations of every command entry point (one per cmd_*.cpp).
int run_show(int argc, char** argv);

}  // namespace paddock::cli
