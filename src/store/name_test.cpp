#include "store/name.h"

#include <gtest/gtest.h>

#include <string>

namespace paddock::store {
namespace {

TEST(Name, FillsDefaults) {
  auto n = Name::parse("model");
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n->display_full(), "registry.ollama.ai/library/model:latest");
  EXPECT_EQ(n->display_shortest(), "model:latest");
  EXPECT_EQ(n->manifest_path(), "registry.ollama.ai/library/model/latest");
  EXPECT_EQ(n->scheme(), "https");
}

TEST(Name, Parts) {
  struct Case {
    const char* in;
    const char* full;
    const char* shortest;
  } cases[] = {
      {"namespace/model", "registry.ollama.ai/namespace/model:latest", "namespace/model:latest"},
      {"host:5000/namespace/model", "host:5000/namespace/model:latest", "host:5000/namespace/model:latest"},
      {"example.com/alice/stories:v1", "example.com/alice/stories:v1", "example.com/alice/stories:v1"},
      {"llama3.2:1b", "registry.ollama.ai/library/llama3.2:1b", "llama3.2:1b"},
      {"_why/_the/_lucky:_stiff", "_why/_the/_lucky:_stiff", "_why/_the/_lucky:_stiff"},
      {"https://example.com/ns/m:t", "example.com/ns/m:t", "example.com/ns/m:t"},
      {"REGISTRY.OLLAMA.AI/Library/Stories", "REGISTRY.OLLAMA.AI/Library/Stories:latest", "Stories:latest"},
  };
  for (const auto& c : cases) {
    auto n = Name::parse(c.in);
    ASSERT_TRUE(n.ok()) << c.in << ": " << n.status().message();
    EXPECT_EQ(n->display_full(), c.full) << c.in;
    EXPECT_EQ(n->display_shortest(), c.shortest) << c.in;
  }
  EXPECT_EQ(Name::parse("http://h/n/m")->scheme(), "http");
}

TEST(Name, Invalid) {
  const std::string too_long(81, 'a');
  const std::string host_too_long(351, 'h');
  const char* cases[] = {
      "",
      "host/name:space/model:tag",
      "-hh/nn/mm:tt",
      "a/b/c/d",
      "m@d",
      "model:",
      ":tag",
      "/model",
      "ns/",
      "..",
      "../etc/passwd",
      "ns/../model",
      "./model",
      "model/..",
      "/abs/path/model",
      "a\\b",
      "mo del",
      "ns.x/model",
      "model:ta:g",
      "model:t/a",
      ".hidden",
      "m\x01",
      "ftp://h/n/m",
      "https://model",
  };
  for (const char* c : cases) EXPECT_FALSE(Name::parse(c).ok()) << c;
  EXPECT_FALSE(Name::parse(std::string("mod\0el", 6)).ok());
  EXPECT_FALSE(Name::parse(too_long).ok());
  EXPECT_FALSE(Name::parse("x:" + too_long).ok());
  EXPECT_FALSE(Name::parse(host_too_long + "/ns/m").ok());
  EXPECT_TRUE(Name::parse(std::string(350, 'h') + "/ns/m").ok());
  EXPECT_TRUE(Name::parse(std::string(80, 'm')).ok());
}

TEST(Name, ErrorSaysWhichPart) {
  auto n = Name::parse("alice/mo$del:v1");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("model \"mo$del\""), std::string::npos) << n.status().message();
  EXPECT_EQ(n.status().code(), Code::kInvalidArgument);
}

TEST(Name, Digest) {
  const std::string hex(64, 'a');
  auto n = Name::parse("stories@sha256:" + hex);
  ASSERT_TRUE(n.ok()) << n.status().message();
  ASSERT_TRUE(n->digest().has_value());
  EXPECT_EQ(n->digest()->file_name(), "sha256-" + hex);
  EXPECT_FALSE(Name::parse("stories@sha256:" + std::string(64, 'A')).ok());
  EXPECT_FALSE(Name::parse("stories@sha256:" + std::string(63, 'a')).ok());
  EXPECT_FALSE(Name::parse("stories@md5:" + hex).ok());
}

TEST(Name, EqualFold) {
  EXPECT_TRUE(Name::parse("Stories")->equal_fold(*Name::parse("stories:LATEST")));
  EXPECT_FALSE(Name::parse("stories")->equal_fold(*Name::parse("stories:v1")));
}

TEST(Name, FromManifestPath) {
  auto n = Name::from_manifest_path("example.com/alice/stories/v1");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->display_shortest(), "example.com/alice/stories:v1");
  EXPECT_FALSE(Name::from_manifest_path("a/b/c").ok());
  EXPECT_FALSE(Name::from_manifest_path("a/b/c/d/e").ok());
  EXPECT_FALSE(Name::from_manifest_path("a/../c/d").ok());
}

TEST(Digest, Forms) {
  const std::string hex(64, 'f');
  auto a = Digest::parse("sha256:" + hex);
  auto b = Digest::parse("sha256-" + hex);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->str(), "sha256:" + hex);
  EXPECT_EQ(a->short_id(), std::string(12, 'f'));
  for (const std::string& bad :
       {"sha256:" + std::string(64, 'F'), "sha256:" + hex + "0", "sha256/" + hex, "sha512:" + hex,
        "sha256:../../" + hex.substr(6), std::string("sha256:\0", 8) + hex, std::string()})
    EXPECT_FALSE(Digest::parse(bad).ok()) << bad;
}

}  // namespace
}  // namespace paddock::store
