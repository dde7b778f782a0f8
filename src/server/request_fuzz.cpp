// Fuzzes the request-body decoding of every route: JSON parsing, the typed readers, options
// conversion and keep_alive durations. No network, no models: properties are "no crash, no
// sanitizer report, and a decoded request obeys its own invariants".
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "server/duration.h"
#include "server/options.h"
#include "server/requests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paddock::server;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parse_go_duration(text);
  auto body = parse_body(text);
  if (!body.ok()) return 0;
  const Json& j = *body;
  if (auto g = parse_generate(j); g.ok()) {
    PADDOCK_CHECK(g->top_logprobs >= 0 && g->top_logprobs <= 20);
    PADDOCK_CHECK(!(g->raw && (g->system || g->template_text || !g->context.empty())));
    (void)effective_options(paddock::store::Params(), g->options);
  }
  if (auto c = parse_chat(j); c.ok()) (void)effective_options(paddock::store::Params(), c->options);
  (void)parse_embed(j);
  (void)parse_embeddings(j);
  (void)parse_model_request(j);
  (void)parse_copy(j);
  (void)parse_create(j);
  if (j.is_object() && j.contains("keep_alive"))
    (void)parse_keep_alive(nlohmann::json::parse(j["keep_alive"].dump()));
  return 0;
}
