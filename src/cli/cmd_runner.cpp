// `paddock runner --fd N --parent-pid P --model FILE [--ctx N] ...`: the runner child process
// that `serve` starts for each loaded model (runner/subprocess_runner.h). Not for people: it
// speaks the runner protocol on the inherited socket --fd and dies with its parent.
#include <cstdio>
#include <string_view>

#include "cli/commands.h"
#include "runner/in_process_runner.h"
#include "runner/runner_child.h"

namespace paddock::cli {

int run_runner(int argc, char** argv) {
  if (argc == 2 && (std::string_view(argv[1]) == "-h" || std::string_view(argv[1]) == "--help")) {
    std::fputs("Usage: paddock runner --fd N --parent-pid P --model FILE [--ctx N] ...\n"
               "Serves one model to `paddock serve`, which starts it; not run by hand.\n",
               stdout);
    return 0;
  }
  return runner::run_runner_child(argc, argv, runner::make_in_process_factory());
}

}  // namespace paddock::cli
