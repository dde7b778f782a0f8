#include "cli/commands.h"

#include <array>
#include <cstdio>

namespace paddock::cli {

namespace {
constexpr std::array kCommands = {
    Command{"show", "Show information about a model (a GGUF file or a model name)", run_show},
    Command{"help", "Help about any command", run_help},
};
}  // namespace

std::span<const Command> commands() { return kCommands; }

int run_help(int, char**) {
  std::printf("Large language model runner\n\nUsage:\n  paddock [command]\n\nAvailable Commands:\n");
  for (const Command& c : kCommands) {
    std::printf("  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::printf("\nFlags:\n  -h, --help      help for paddock\n  -v, --version   Show version information\n");
  return 0;
}

}  // namespace paddock::cli
