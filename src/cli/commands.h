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
int run_serve(int argc, char** argv);
int run_template(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_tokenize(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_run(int argc, char** argv);
int run_create(int argc, char** argv);
int run_pull(int argc, char** argv);
int run_push(int argc, char** argv);
int run_list(int argc, char** argv);
int run_ps(int argc, char** argv);
int run_cp(int argc, char** argv);
int run_rm(int argc, char** argv);
int run_stop(int argc, char** argv);
int run_runner(int argc, char** argv);

}  // namespace paddock::cli
