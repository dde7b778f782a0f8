// Fuzzes what a hostile registry controls in the URL layer: the WWW-Authenticate challenge
// (and the token URL built from it) and redirect Locations.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/registry_url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  paddock::Result<paddock::store::BearerChallenge> c = paddock::store::parse_www_authenticate(s);
  if (c.ok()) (void)paddock::store::token_url(*c, "https://registry.example/v2/a/b/manifests/latest");
  (void)paddock::store::decide_redirect("https://registry.example/v2/x", "https://registry.example/v2/x", s,
                                        1, 10, false);
  return 0;
}
