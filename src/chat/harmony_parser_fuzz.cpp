// Fuzzes the Harmony output parser: the input is fed in chunks whose sizes follow from its
// first byte; whatever it is, the parser must neither crash nor hang.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chat/harmony_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  paddock::chat::HarmonyParser p([] { return std::string("call_fuzz"); });
  size_t step = size > 0 ? data[0] % 16 + 1 : 1;
  while (!text.empty()) {
    const size_t n = std::min(step, text.size());
    (void)p.add(text.substr(0, n));
    text.remove_prefix(n);
    step = step % 7 + 1;
  }
  (void)p.finish();
  return 0;
}
