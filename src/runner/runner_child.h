// The child side of a runner subprocess (`paddock runner ...`): loads one model through an
// injected RunnerFactory and serves the runner protocol (runner_protocol.h) on an inherited
// socket until the parent closes it or dies. The child dies with the parent: it sets
// PR_SET_PDEATHSIG(SIGKILL) and exits if its parent is already gone.
// Invariants: the loaded/error message is the first thing the child sends; every later
// message carries the "id" of the request it answers; completions (and embeddings) run on
// their own threads, so several may be in flight (up to the runner's num_parallel decode
// together); `cancel{id}` stops one; EOF cancels all, waits for them, and exits.
//   return run_runner_child(argc, argv, make_in_process_factory());   // in cmd_runner.cpp
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "runner/runner.h"

namespace paddock::runner {

struct ChildArgs {
  int fd = -1;          // the protocol socket
  long parent_pid = 0;  // the child exits at start when its parent is not this one
  LoadOptions load;
};

// The command line after the executable: {"runner", "--fd", "3", "--parent-pid", P,
// "--model", PATH, ["--ctx", N], ["--parallel", N], ["--batch", N], ["--threads", N], ["--gpu", N],
// ["--no-mmap"], ["--adapter", P]..., ["--projector", P]...}.
std::vector<std::string> runner_command_line(const ChildArgs& args);
// The inverse; argv[0] is the subcommand name ("runner").
Result<ChildArgs> parse_runner_command_line(int argc, char** argv);

// The child's main: parses argv, arms the parent-death signal, loads and serves. Returns the
// process exit code (0 when the parent closed the connection).
int run_runner_child(int argc, char** argv, const RunnerFactory& factory);

}  // namespace paddock::runner
