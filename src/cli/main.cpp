// paddock: the one binary. Dispatches to the subcommand table in commands.cpp.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "cli/commands.h"
#include "cli/version.h"

int main(int argc, char** argv) {
  using namespace paddock::cli;
  if (argc < 2) return run_help(0, nullptr);
  const std::string_view name = argv[1];
  if (name == "-v" || name == "--version" || name == "version") {
    std::printf("paddock version is %s\n", kVersion);
    return 0;
  }
  if (name == "-h" || name == "--help") return run_help(0, nullptr);
  for (const Command& c : commands()) {
    if (c.name == name) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "Error: unknown command \"%s\" for \"paddock\"\nRun 'paddock help' for usage.\n", argv[1]);
  return 1;
}
