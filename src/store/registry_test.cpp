#include <gtest/gtest.h>

#include "store/registry_url.h"

namespace paddock::store {
namespace {

Name parse(std::string_view s) {
  Result<Name> n = Name::parse(s);
  EXPECT_TRUE(n.ok()) << s << ": " << n.status().to_string();
  return n.ok() ? *n : Name();
}

TEST(RegistryUrl, BuildsManifestAndBlobUrls) {
  Name n = parse("llama3.2");
  EXPECT_EQ(*manifest_url(n, false), "https://registry.ollama.ai/v2/library/llama3.2/manifests/latest");
  Result<Digest> d = Digest::parse("sha256:" + std::string(64, 'a'));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*blob_url(n, *d, false),
            "https://registry.ollama.ai/v2/library/llama3.2/blobs/sha256:" + std::string(64, 'a'));
  EXPECT_EQ(*upload_start_url(n, false), "https://registry.ollama.ai/v2/library/llama3.2/blobs/uploads/");
}

TEST(RegistryUrl, InsecureUsesHttpAndPlainHttpNeedsIt) {
  Name local = parse("127.0.0.1:5000/test/stories:v1");
  EXPECT_EQ(*manifest_url(local, true), "http://127.0.0.1:5000/v2/test/stories/manifests/v1");
  Name http = parse("http://example.com/a/b:c");
  Result<std::string> refused = manifest_url(http, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "insecure protocol http");
  EXPECT_EQ(*manifest_url(http, true), "http://example.com/v2/a/b/manifests/c");
}

TEST(RegistryUrl, NamesCannotInjectPaths) {
  for (const char* bad :
       {"a/../../b", "x/y/z%2f:t", "m:../../etc", "m?x=1", "m#frag", "ns/m:t/../x", "a//b"}) {
    Result<Name> n = Name::parse(bad);
    if (!n.ok()) continue;
    Result<std::string> u = manifest_url(*n, false);
    ASSERT_TRUE(u.ok());
    EXPECT_EQ(u->find(".."), std::string::npos) << bad;
    EXPECT_EQ(u->find_first_of("?#%"), std::string::npos) << bad;
  }
}

TEST(RegistryUrl, PercentEncodeAndQuery) {
  EXPECT_EQ(percent_encode("repository:a/b:pull,push"), "repository%3Aa%2Fb%3Apull%2Cpush");
  EXPECT_EQ(add_query("http://h/x", "a", "1 2"), "http://h/x?a=1%202");
  EXPECT_EQ(add_query("http://h/x?u=1", "digest", "sha256:ab"), "http://h/x?u=1&digest=sha256%3Aab");
}

TEST(WwwAuthenticate, ParsesQuotedValuesWithCommas) {
  Result<BearerChallenge> c = parse_www_authenticate(
      R"(Bearer realm="https://registry.ollama.ai/v2/token",service="registry.ollama.ai",scope="repository:library/x:pull,push")");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->realm, "https://registry.ollama.ai/v2/token");
  EXPECT_EQ(c->service, "registry.ollama.ai");
  EXPECT_EQ(c->scope, "repository:library/x:pull,push");
}

TEST(WwwAuthenticate, SchemeCaseBareValuesAndEscapes) {
  Result<BearerChallenge> c = parse_www_authenticate(R"(bearer  realm=http://h/t , service="a\"b")");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->realm, "http://h/t");
  EXPECT_EQ(c->service, "a\"b");
  EXPECT_TRUE(c->scope.empty());
}

TEST(WwwAuthenticate, RefusesOtherSchemesAndGarbage) {
  EXPECT_EQ(parse_www_authenticate(R"(Basic realm="x")").status().code(), Code::kUnsupported);
  EXPECT_FALSE(parse_www_authenticate(R"(Bearer realm="unterminated)").ok());
  EXPECT_FALSE(parse_www_authenticate(R"(Bearer service="s")").ok());
  EXPECT_FALSE(parse_www_authenticate("Bearer noequals").ok());
}

TEST(TokenUrl, StaysOnTheRegistryHost) {
  BearerChallenge c{"https://r.example/token", "r.example", "repository:a/b:pull"};
  EXPECT_EQ(*token_url(c, "https://r.example/v2/a/b/manifests/latest"),
            "https://r.example/token?service=r.example&scope=repository%3Aa%2Fb%3Apull");
  BearerChallenge elsewhere{"https://evil.example/token", "", ""};
  EXPECT_FALSE(token_url(elsewhere, "https://r.example/v2/").ok());
  BearerChallenge ftp{"ftp://r.example/token", "", ""};
  EXPECT_FALSE(token_url(ftp, "https://r.example/v2/").ok());
  BearerChallenge other_port{"https://r.example:8443/token", "", ""};
  EXPECT_FALSE(token_url(other_port, "https://r.example/v2/").ok());
  BearerChallenge explicit_default{"https://r.example:443/token", "", ""};
  EXPECT_TRUE(token_url(explicit_default, "https://r.example/v2/").ok());
  BearerChallenge same_port{"http://127.0.0.1:5000/token", "", ""};
  EXPECT_TRUE(token_url(same_port, "http://127.0.0.1:5000/v2/").ok());
}

TEST(Redirects, RelativeSameHostKeepsAuth) {
  Result<RedirectDecision> d =
      decide_redirect("https://r/v2/a/b/blobs/x", "https://r/v2/a/b/blobs/x", "/store/x", 1, 10, false);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->url, "https://r/store/x");
  EXPECT_TRUE(d->keep_auth);
}

TEST(Redirects, OtherHostOrPortDropsAuth) {
  auto d = decide_redirect("https://r/v2/x", "https://r/v2/x", "https://cdn.example/obj?sig=1", 1, 10, false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->url, "https://cdn.example/obj?sig=1");
  EXPECT_FALSE(d->keep_auth);
  auto port = decide_redirect("https://r/v2/x", "https://r/v2/x", "https://r:8443/y", 1, 10, false);
  ASSERT_TRUE(port.ok());
  EXPECT_FALSE(port->keep_auth);
  // Back on the original host after a detour: still the same host, so auth is fine again
  // only if the caller kept it (RegistryHttp ANDs the decisions along the chain).
  auto back = decide_redirect("https://r/v2/x", "https://cdn.example/o", "https://r/v2/z", 2, 10, false);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->keep_auth);
}

TEST(Redirects, RefusesOtherSchemesLoopsAndDowngrades) {
  EXPECT_FALSE(decide_redirect("https://r/a", "https://r/a", "file:///etc/passwd", 1, 10, false).ok());
  EXPECT_FALSE(decide_redirect("https://r/a", "https://r/a", "ftp://r/a", 1, 10, false).ok());
  EXPECT_FALSE(decide_redirect("https://r/a", "https://r/a", "gopher://r/a", 1, 10, true).ok());
  Result<RedirectDecision> loop = decide_redirect("https://r/a", "https://r/a", "https://r/a", 11, 10, false);
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("too many redirects"), std::string::npos);
  EXPECT_FALSE(decide_redirect("https://r/a", "https://r/a", "http://r/a", 1, 10, false).ok());
  EXPECT_TRUE(decide_redirect("https://r/a", "https://r/a", "http://r/a", 1, 10, true).ok());
  EXPECT_FALSE(decide_redirect("https://r/a", "https://r/a", "", 1, 10, false).ok());
}

}  // namespace
}  // namespace paddock::store
