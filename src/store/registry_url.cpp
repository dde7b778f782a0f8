#include "store/registry_url.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>

namespace paddock::store {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

Result<std::string> get_part(CURLU* u, CURLUPart part, bool required) {
  char* v = nullptr;
  CURLUcode rc = curl_url_get(u, part, &v, 0);
  if (rc != CURLUE_OK) {
    if (!required) return std::string();
    return invalid_argument(std::string("URL part missing: ") + curl_url_strerror(rc));
  }
  std::string out(v);
  curl_free(v);
  return out;
}

Result<std::string> repo_url(const Name& name, bool insecure, std::string_view rest) {
  PADDOCK_ASSIGN(std::string base, registry_base_url(name, insecure));
  return base + "/v2/" + name.namespace_model() + std::string(rest);
}

}  // namespace

Result<std::string> registry_base_url(const Name& name, bool insecure) {
  std::string scheme = lower(name.scheme());
  if (scheme != "http" && scheme != "https") {
    return invalid_argument("unsupported registry scheme " + scheme + "; expected http or https");
  }
  if (scheme == "http" && !insecure) return invalid_argument("insecure protocol http");
  if (insecure) scheme = "http";
  return scheme + "://" + name.host();
}

Result<std::string> manifest_url(const Name& name, bool insecure) {
  return repo_url(name, insecure, "/manifests/" + name.tag());
}

Result<std::string> blob_url(const Name& name, const Digest& digest, bool insecure) {
  return repo_url(name, insecure, "/blobs/" + digest.str());
}

Result<std::string> upload_start_url(const Name& name, bool insecure) {
  return repo_url(name, insecure, "/blobs/uploads/");
}

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string add_query(std::string_view url, std::string_view key, std::string_view value) {
  std::string out(url);
  out += url.find('?') == std::string_view::npos ? '?' : '&';
  out += key;
  out += '=';
  out += percent_encode(value);
  return out;
}

Result<BearerChallenge> parse_www_authenticate(std::string_view h) {
  size_t i = 0;
  while (i < h.size() && h[i] == ' ') ++i;
  size_t scheme_end = h.find(' ', i);
  std::string scheme =
      lower(h.substr(i, scheme_end == std::string_view::npos ? h.size() - i : scheme_end - i));
  if (scheme != "bearer") {
    return unsupported("registry asks for \"" + scheme + "\" authentication; only Bearer is supported");
  }
  BearerChallenge c;
  i = scheme_end == std::string_view::npos ? h.size() : scheme_end;
  while (i < h.size()) {
    while (i < h.size() && (h[i] == ' ' || h[i] == ',')) ++i;
    if (i >= h.size()) break;
    size_t eq = h.find('=', i);
    if (eq == std::string_view::npos)
      return invalid_argument("malformed WWW-Authenticate: " + std::string(h));
    std::string key = lower(h.substr(i, eq - i));
    while (!key.empty() && key.back() == ' ') key.pop_back();
    i = eq + 1;
    std::string value;
    if (i < h.size() && h[i] == '"') {
      ++i;
      bool closed = false;
      while (i < h.size()) {
        char ch = h[i++];
        if (ch == '\\' && i < h.size()) {
          value += h[i++];
        } else if (ch == '"') {
          closed = true;
          break;
        } else {
          value += ch;
        }
      }
      if (!closed)
        return invalid_argument("malformed WWW-Authenticate (unterminated quote): " + std::string(h));
    } else {
      while (i < h.size() && h[i] != ',') value += h[i++];
      while (!value.empty() && value.back() == ' ') value.pop_back();
    }
    if (key == "realm") c.realm = value;
    if (key == "service") c.service = value;
    if (key == "scope") c.scope = value;
  }
  if (c.realm.empty())
    return invalid_argument("WWW-Authenticate Bearer challenge without a realm: " + std::string(h));
  return c;
}

Result<UrlParts> split_url(std::string_view url) {
  UrlHandle u(curl_url());
  if (!u) return internal_error("curl_url: out of memory");
  std::string s(url);
  CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, s.c_str(), 0);
  if (rc != CURLUE_OK) return invalid_argument("invalid URL \"" + s + "\": " + curl_url_strerror(rc));
  UrlParts p;
  PADDOCK_ASSIGN(p.scheme, get_part(u.get(), CURLUPART_SCHEME, true));
  PADDOCK_ASSIGN(p.host, get_part(u.get(), CURLUPART_HOST, true));
  PADDOCK_ASSIGN(p.port, get_part(u.get(), CURLUPART_PORT, false));
  p.scheme = lower(p.scheme);
  p.host = lower(p.host);
  return p;
}

Result<std::string> token_url(const BearerChallenge& c, std::string_view registry_url) {
  PADDOCK_ASSIGN(UrlParts realm, split_url(c.realm));
  PADDOCK_ASSIGN(UrlParts reg, split_url(registry_url));
  if (realm.scheme != "http" && realm.scheme != "https") {
    return invalid_argument("token realm " + c.realm + " is not http(s)");
  }
  // Host and port: another service on the registry's host must not receive its credentials.
  const auto port = [](const UrlParts& p) { return p.port.empty() ? (p.scheme == "https" ? "443" : "80") : p.port; };
  if (realm.host != reg.host || port(realm) != port(reg)) {
    return invalid_argument("token realm " + realm.host + ":" + port(realm) + " does not match registry " + reg.host +
                            ":" + port(reg));
  }
  std::string url = c.realm;
  if (!c.service.empty()) url = add_query(url, "service", c.service);
  if (!c.scope.empty()) url = add_query(url, "scope", c.scope);
  return url;
}

Result<RedirectDecision> decide_redirect(std::string_view original, std::string_view current,
                                         std::string_view location, int hops, int max_hops, bool insecure) {
  if (hops > max_hops)
    return invalid_argument("too many redirects (more than " + std::to_string(max_hops) + ")");
  if (location.empty()) return invalid_argument("redirect without a Location header");
  UrlHandle u(curl_url());
  if (!u) return internal_error("curl_url: out of memory");
  std::string cur(current), loc(location);
  if (curl_url_set(u.get(), CURLUPART_URL, cur.c_str(), 0) != CURLUE_OK) {
    return invalid_argument("invalid URL \"" + cur + "\"");
  }
  // With a base set, a relative Location resolves against it; an absolute one replaces it.
  CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, loc.c_str(), CURLU_NON_SUPPORT_SCHEME);
  if (rc != CURLUE_OK)
    return invalid_argument("invalid redirect location \"" + loc + "\": " + curl_url_strerror(rc));
  PADDOCK_ASSIGN(std::string target, get_part(u.get(), CURLUPART_URL, true));
  PADDOCK_ASSIGN(std::string scheme, get_part(u.get(), CURLUPART_SCHEME, true));
  scheme = lower(scheme);
  if (scheme != "http" && scheme != "https") {
    return invalid_argument("refusing redirect to " + loc + ": only http and https are allowed");
  }
  PADDOCK_ASSIGN(UrlParts from, split_url(cur));
  if (from.scheme == "https" && scheme == "http" && !insecure) {
    return invalid_argument("refusing redirect from https to plain http (" + loc + ")");
  }
  PADDOCK_ASSIGN(UrlParts orig, split_url(original));
  PADDOCK_ASSIGN(UrlParts to, split_url(target));
  RedirectDecision d;
  d.url = target;
  d.keep_auth = to.scheme == orig.scheme && to.host == orig.host && to.port == orig.port;
  return d;
}

}  // namespace paddock::store
