#include "cli/commands.h"

#include <array>
#include <cstdio>
#include <string>
#include <string_view>

namespace paddock::cli {

namespace {
constexpr std::array kCommands = {
    Command{"serve", "Start paddock", run_serve},
    Command{"create", "Create a model from a Modelfile", run_create},
    Command{"show", "Show information about a model (a GGUF file or a model name)", run_show},
    Command{"run", "Run a model", run_run},
    Command{"stop", "Stop a running model", run_stop},
    Command{"pull", "Pull a model from a registry", run_pull},
    Command{"push", "Push a model to a registry", run_push},
    Command{"list", "List models", run_list},
    Command{"ls", "List models (alias of list)", run_list},
    Command{"ps", "List running models", run_ps},
    Command{"cp", "Copy a model", run_cp},
    Command{"rm", "Remove a model", run_rm},
    Command{"eval", "Evaluate prompts and print logits and greedy tokens as JSON lines", run_eval},
    Command{"tokenize", "Tokenize text with a model's vocabulary", run_tokenize},
    Command{"template", "Render a chat template for a conversation", run_template},
    Command{"bench", "Measure prompt and generation speed (llama-bench style)", run_bench},
    Command{"runner", "Serve one model for the server (started by serve, not by hand)", run_runner},
    Command{"help", "Help about any command", run_help},
};
}  // namespace

std::span<const Command> commands() { return kCommands; }

int run_help(int argc, char** argv) {
  // `paddock help CMD` is `paddock CMD --help`, as in Ollama.
  const std::string_view topic = argc >= 2 ? argv[1] : "";
  if (!topic.empty() && topic != "help" && topic != "-h" && topic != "--help") {
    for (const Command& c : kCommands) {
      if (c.name != topic) continue;
      std::string name(c.name), flag("--help");
      char* args[] = {name.data(), flag.data(), nullptr};
      return c.run(2, args);
    }
    std::fprintf(stderr, "Error: unknown command \"%s\" for \"paddock\"\nRun 'paddock help' for usage.\n", argv[1]);
    return 1;
  }
  std::printf("Large language model runner\n\nUsage:\n  paddock [command]\n\nAvailable Commands:\n");
  for (const Command& c : kCommands) {
    std::printf("  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::printf("\nFlags:\n  -h, --help      help for paddock\n  -v, --version   Show version information\n");
  return 0;
}

}  // namespace paddock::cli
