// `paddock show`: placeholder until the GGUF reader lands.
#include <cstdio>

#include "cli/commands.h"

namespace paddock::cli {
int run_show(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "Error: show needs a model name or a GGUF file\n");
    return 1;
  }
  std::fprintf(stderr, "Error: %s: not implemented yet\n", argv[1]);
  return 1;
}
}  // namespace paddock::cli
