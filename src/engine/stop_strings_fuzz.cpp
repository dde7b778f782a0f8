// Properties of StopMatcher over arbitrary text split at arbitrary points: the output is a
// prefix of the input, never contains a stop string, and without a stop is the whole input.
// Input layout: byte 0 = number of stops (0..3), then stops and chunks separated by 0xFF.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "engine/stop_strings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t n_stops = data[0] % 4;
  std::vector<std::string> parts(1);
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0xFF) {
      parts.emplace_back();
    } else {
      parts.back().push_back(static_cast<char>(data[i]));
    }
  }
  std::vector<std::string> stops;
  for (size_t i = 0; i < n_stops && i < parts.size(); ++i) stops.push_back(parts[i]);
  paddock::engine::StopMatcher m(stops);
  std::string input;
  std::string output;
  for (size_t i = stops.size(); i < parts.size(); ++i) {
    input += parts[i];
    output += m.push(parts[i]);
  }
  output += m.flush();
  PADDOCK_CHECK(input.compare(0, output.size(), output) == 0);
  for (const std::string& s : stops) PADDOCK_CHECK(s.empty() || output.find(s) == std::string::npos);
  if (!m.stopped()) PADDOCK_CHECK(output == input);
  return 0;
}
