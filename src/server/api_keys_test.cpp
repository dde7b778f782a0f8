#include "server/api_keys.h"

#include <gtest/gtest.h>

namespace paddock::server {
namespace {

constexpr const char* kUse = "use-key-0123456789";
constexpr const char* kAdmin = "admin-key-0123456789";

HttpRequest request(std::string method, std::string path, Headers headers = {}) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.headers = std::move(headers);
  return r;
}

Headers bearer(const std::string& key) { return {{"Authorization", "Bearer " + key}}; }

TEST(ApiKeys, ParsesKeysAndScopes) {
  auto k = ApiKeys::parse(std::string(kUse) + " , " + kAdmin + ":admin," + "other-key-0123456789:use");
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  EXPECT_TRUE(k->enabled());
  EXPECT_FALSE(ApiKeys::parse("").value().enabled());
  EXPECT_NE(ApiKeys::parse("short").status().message().find("at least 16"), std::string::npos);
  EXPECT_NE(ApiKeys::parse(std::string(kUse) + ":root").status().message().find("unknown scope \"root\""),
            std::string::npos);
}

TEST(ApiKeys, OffWhenUnset) {
  const ApiKeys none;
  EXPECT_FALSE(none.check(request("POST", "/api/pull")));
  EXPECT_FALSE(none.check(request("POST", "/api/chat")));
}

TEST(ApiKeys, EveryRouteButLivenessNeedsAKey) {
  const ApiKeys keys = ApiKeys::parse(std::string(kUse) + "," + kAdmin + ":admin").value();
  for (const char* path : {"/api/chat", "/api/tags", "/v1/chat/completions", "/v1/messages", "/api/pull"}) {
    const auto d = keys.check(request("POST", path));
    ASSERT_TRUE(d) << path;
    EXPECT_EQ(d->status, 401) << path;
    EXPECT_EQ(keys.check(request("POST", path, bearer("wrong-key-0123456789")))->status, 401) << path;
  }
  EXPECT_FALSE(keys.check(request("GET", "/")));
  EXPECT_FALSE(keys.check(request("HEAD", "/")));
  EXPECT_FALSE(keys.check(request("GET", "/api/version")));
  EXPECT_FALSE(keys.check(request("OPTIONS", "/api/chat")));
}

TEST(ApiKeys, ScopesGateTheStoreChangingRoutes) {
  const ApiKeys keys = ApiKeys::parse(std::string(kUse) + "," + kAdmin + ":admin").value();
  EXPECT_FALSE(keys.check(request("POST", "/api/chat", bearer(kUse))));
  EXPECT_FALSE(keys.check(request("GET", "/api/tags", bearer(kUse))));
  EXPECT_FALSE(keys.check(request("GET", "/metrics", bearer(kUse))));  // read-only, like /api/ps
  EXPECT_EQ(keys.check(request("GET", "/metrics"))->status, 401);
  EXPECT_FALSE(keys.check(request("POST", "/v1/messages", {{"x-api-key", kUse}})));  // Anthropic's header
  for (const char* path : {"/api/pull", "/api/push", "/api/create", "/api/copy", "/api/delete", "/api/blobs/sha256:ab"}) {
    const auto d = keys.check(request("POST", path, bearer(kUse)));
    ASSERT_TRUE(d) << path;
    EXPECT_EQ(d->status, 403) << path;
    EXPECT_FALSE(keys.check(request("POST", path, bearer(kAdmin)))) << path;
  }
  // A prefix or an extension of a key is not the key.
  EXPECT_TRUE(keys.check(request("POST", "/api/chat", bearer(std::string(kUse).substr(0, 17)))));
  EXPECT_TRUE(keys.check(request("POST", "/api/chat", bearer(std::string(kUse) + "x"))));
}

}  // namespace
}  // namespace paddock::server
