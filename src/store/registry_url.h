// Pure pieces of the registry protocol, kept apart from the network so they can be tested:
// URL building from a validated Name (whose parts cannot contain '/', '?', '#', '%' or "..",
// so no name can reach another path), the WWW-Authenticate Bearer challenge parser, the
// token URL, and the redirect policy (http/https only, bounded hops, no https->http
// downgrade unless insecure, credentials only to the host that was asked).
//   PADDOCK_ASSIGN(std::string u, manifest_url(name, /*insecure=*/false));
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "store/digest.h"
#include "store/name.h"

namespace paddock::store {

// "<scheme>://<host>": scheme from the name; "http" needs `insecure` ("insecure protocol
// http"), and `insecure` downgrades https to http, as Ollama does.
Result<std::string> registry_base_url(const Name& name, bool insecure);
Result<std::string> manifest_url(const Name& name, bool insecure);
Result<std::string> blob_url(const Name& name, const Digest& digest, bool insecure);
Result<std::string> upload_start_url(const Name& name, bool insecure);

// RFC 3986 unreserved characters kept, everything else %XX.
std::string percent_encode(std::string_view s);

// Appends "key=value" (value percent-encoded) with '?' or '&' as the URL needs.
std::string add_query(std::string_view url, std::string_view key, std::string_view value);

struct BearerChallenge {
  std::string realm, service, scope;
};
// Parses `Bearer realm="...",service="...",scope="..."` (scheme case-insensitive, quoted or
// bare values, backslash escapes, commas inside quotes). Other schemes -> Unsupported.
Result<BearerChallenge> parse_www_authenticate(std::string_view header);

// The anonymous token request: realm?service=..&scope=.. . The realm must be http(s) and on
// the registry's own host (Ollama's rule: a token request never goes elsewhere).
Result<std::string> token_url(const BearerChallenge& c, std::string_view registry_url);

struct UrlParts {
  std::string scheme, host, port;  // lowercase scheme and host; port "" when default
};
Result<UrlParts> split_url(std::string_view url);

struct RedirectDecision {
  std::string url;         // absolute target
  bool keep_auth = false;  // same scheme, host and port as the original request
};
// Decides whether to follow `location` (absolute or relative) received from `current`,
// which is hop number `hops` (1 = first redirect) of a request originally sent to
// `original`. Refuses other schemes, more than `max_hops`, and https->http unless insecure.
Result<RedirectDecision> decide_redirect(std::string_view original, std::string_view current,
                                         std::string_view location, int hops, int max_hops, bool insecure);

}  // namespace paddock::store
