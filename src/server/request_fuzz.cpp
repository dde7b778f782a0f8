// Fuzzes the request-body decoding of every route: JSON parsing, the typed readers, options
// conversion, keep_alive durations and the Anthropic Messages and OpenAI Responses
// translations. No network, no models: properties are "no crash, no sanitizer report, and a
// decoded request obeys its own invariants".
// Depth and size are hard to reach byte by byte, so a first byte of 0x01 nests the rest
// inside `format` under up to 262140 levels of brackets (the next two bytes times 4), and
// 0x02 repeats the rest to 256 KiB; any other input is the body as it is. Then: a body that
// parses nests at most kMaxJsonDepth levels (and survives the recursive dump and copy that
// crashed the server), and no error message is long, whatever the body's size.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include "base/check.h"
#include "base/json_depth.h"
#include "server/anthropic.h"
#include "server/api_util.h"
#include "server/duration.h"
#include "server/options.h"
#include "server/requests.h"
#include "server/responses.h"

namespace {

using namespace paddock::server;

constexpr size_t kMaxParseMessage = 256;

std::string make_body(std::string_view in, size_t* nesting) {
  *nesting = 0;
  if (in.size() >= 3 && in[0] == '\x01') {
    *nesting = (static_cast<size_t>(static_cast<uint8_t>(in[1])) << 8 | static_cast<uint8_t>(in[2])) * 4;
    return "{\"format\":" + std::string(*nesting, '[') + std::string(in.substr(3)) +
           std::string(*nesting, ']') + "}";
  }
  if (!in.empty() && in[0] == '\x02') {
    const std::string_view unit = in.size() > 1 ? in.substr(1) : std::string_view("x");
    std::string big;
    while (big.size() < (size_t{256} << 10)) big += unit;
    return big;
  }
  return std::string(in);
}

template <typename T>
void check_error(const paddock::Result<T>& r) {
  if (!r.ok()) PADDOCK_CHECK(public_message(r.status().message()).size() <= kMaxErrorBytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t nesting = 0;
  const std::string text = make_body(std::string_view(reinterpret_cast<const char*>(data), size), &nesting);
  (void)parse_go_duration(text);
  auto body = parse_body(text);
  if (!body.ok()) {
    PADDOCK_CHECK(body.status().message().size() <= kMaxParseMessage);
    return 0;
  }
  // The outer object adds a level to the brackets: past the limit, the body must be refused.
  PADDOCK_CHECK(nesting < paddock::kMaxJsonDepth);
  PADDOCK_CHECK(!paddock::json_too_deep(text));
  const Json& j = *body;
  const Json copy = j;
  (void)copy.dump();
  if (auto g = parse_generate(j); g.ok()) {
    PADDOCK_CHECK(g->top_logprobs >= 0 && g->top_logprobs <= 20);
    PADDOCK_CHECK(!(g->raw && (g->system || g->template_text || !g->context.empty())));
    auto o = effective_options(paddock::store::Params(), g->options);
    if (o.ok()) {
      PADDOCK_CHECK(o->num_ctx == 0 || (o->num_ctx >= kMinNumCtx && o->num_ctx <= kMaxNumCtx));
      PADDOCK_CHECK(!o->num_thread || (*o->num_thread >= 1 &&
                                       *o->num_thread <= std::max(1u, std::thread::hardware_concurrency())));
    }
    check_error(o);
  } else {
    check_error(g);
  }
  if (auto c = parse_chat(j); c.ok()) {
    check_error(effective_options(paddock::store::Params(), c->options));
  } else {
    check_error(c);
  }
  // Anthropic Messages: a request it translates is a native chat request with messages (or a
  // client error the native parser names, such as a tool_choice naming no tool).
  for (const bool count_only : {false, true}) {
    auto a = anthropic::to_native_chat(j, count_only);
    check_error(a);
    if (!a.ok()) continue;
    auto c = parse_chat(*a);
    check_error(c);
    if (c.ok()) PADDOCK_CHECK(!c->messages.empty() && !c->model.empty());
  }
  // OpenAI Responses: the same, with the body's input as a previous response's output too.
  auto r =
      responses::to_native_chat(j, Json::array(), j.is_object() ? j.value("input", Json::array()) : Json());
  check_error(r);
  if (r.ok()) {
    auto c = parse_chat(r->native);
    check_error(c);
    if (c.ok()) PADDOCK_CHECK(!c->messages.empty() && !c->model.empty());
  }
  check_error(responses::previous_response_id(j));
  check_error(parse_embed(j));
  check_error(parse_embeddings(j));
  check_error(parse_model_request(j));
  check_error(parse_copy(j));
  check_error(parse_create(j));
  if (j.is_object() && j.contains("keep_alive"))
    (void)parse_keep_alive(nlohmann::json::parse(j["keep_alive"].dump()));
  return 0;
}
