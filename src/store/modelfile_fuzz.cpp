// Fuzzes the Modelfile parser: no crash, and a parsed Modelfile rendered back with
// to_string() parses again to the same instructions (values may differ where Ollama's
// quoting cannot express them, e.g. a value that itself starts and ends with '"').
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "store/modelfile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto mf = paddock::store::parse_modelfile(text);
  if (!mf.ok()) return 0;
  // Values with a '"' may not be expressible in Ollama's quoting (see quote_modelfile_value).
  for (const auto& c : mf->commands)
    if (c.args.find('"') != std::string::npos) return 0;
  auto again = paddock::store::parse_modelfile(mf->to_string());
  if (!again.ok()) std::abort();
  if (again->commands.size() != mf->commands.size() || again->from.size() != mf->from.size() ||
      again->messages.size() != mf->messages.size())
    std::abort();
  return 0;
}
