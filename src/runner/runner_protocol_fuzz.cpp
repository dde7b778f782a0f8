// Fuzzes what a runner child or the server does with bytes from the other side: framing,
// then every message decoder.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/runner_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paddock::runner;
  FrameDecoder d;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Two feeds so frames straddle a boundary.
  d.feed(bytes.substr(0, size / 2));
  for (int round = 0; round < 2; ++round) {
    for (;;) {
      auto m = d.next();
      if (!m.ok() || !m->has_value()) break;
      const nlohmann::json& j = **m;
      (void)completion_request_from_json(j.value("request", nlohmann::json::object()));
      (void)completion_chunk_from_json(j.value("chunk", nlohmann::json::object()));
      (void)model_facts_from_json(j.value("facts", nlohmann::json::object()));
      (void)status_from_error(j);
      (void)encode_frame(j);
    }
    if (round == 0) d.feed(bytes.substr(size / 2));
  }
  return 0;
}
