#include "store/manifest.h"

#include <gtest/gtest.h>

#include "store/go_json.h"
#include "store/params.h"

namespace paddock::store {
namespace {

const std::string kHex1(64, '1'), kHex2(64, '2');

std::string manifest_json(const std::string& layer_type, const std::string& size, const std::string& digest) {
  return "{\"schemaVersion\":2,\"mediaType\":\"application/"
         "vnd.docker.distribution.manifest.v2+json\",\"config\":"
         "{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
         kHex1 + "\",\"size\":150},\"layers\":[{\"mediaType\":\"" + layer_type + "\",\"digest\":\"" + digest +
         "\",\"size\":" + size + ",\"from\":\"stories:latest\"}]}\n";
}

TEST(Manifest, RoundTripsByteForByte) {
  const std::string text = manifest_json(std::string(kMediaModel), "1185376", "sha256:" + kHex2);
  auto m = Manifest::parse(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->to_json(), text);
  EXPECT_EQ(m->total_size(), 1185376u + 150u);
  EXPECT_EQ(m->layers[0].from, "stories:latest");
}

TEST(Manifest, RefusesMalicious) {
  const std::string model(kMediaModel);
  const std::string good = "sha256:" + kHex2;
  struct Case {
    std::string text, expect;
  } cases[] = {
      {"not json", "not valid JSON"},
      {"[]", "expected a JSON object"},
      {manifest_json("application/x-evil", "1", good), "unknown media type"},
      {manifest_json(model, "18446744073709551615", good), "larger than"},
      {manifest_json(model, "-1", good), "non-negative integer"},
      {manifest_json(model, "1.5", good), "non-negative integer"},
      {manifest_json(model, "1", "sha256:../../etc/passwd"), "invalid digest format"},
      {manifest_json(model, "1", "sha256:" + std::string(64, 'A')), "invalid digest format"},
      {"{\"schemaVersion\":1}", "schemaVersion"},
  };
  for (const auto& c : cases) {
    auto m = Manifest::parse(c.text);
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_NE(m.status().message().find(c.expect), std::string::npos) << m.status().message();
  }
  EXPECT_FALSE(Manifest::parse(std::string(kMaxManifestBytes + 1, ' ')).ok());
}

TEST(ModelConfig, WritesOllamaBytes) {
  ModelConfig c;
  c.model_format = "gguf";
  c.model_family = "llama";
  c.model_families = {"llama"};
  c.model_type = "292.10K";
  c.file_type = "F32";
  c.architecture = "amd64";
  c.os = "linux";
  const std::string want =
      "{\"model_format\":\"gguf\",\"model_family\":\"llama\",\"model_families\":[\"llama\"],\"model_type\":"
      "\"292.10K\",\"file_type\":\"F32\",\"architecture\":\"amd64\",\"os\":\"linux\"}";
  EXPECT_EQ(c.to_json(), want);
  auto back = ModelConfig::parse(want);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->to_json(), want);
  c.model_families.clear();
  EXPECT_NE(c.to_json().find("\"model_families\":null"), std::string::npos);
}

TEST(GoJson, Strings) {
  EXPECT_EQ(go_json_string("<a & b>"), "\"\\u003ca \\u0026 b\\u003e\"");
  EXPECT_EQ(go_json_string("q\"\\\n\t\x01"), "\"q\\\"\\\\\\n\\t\\u0001\"");
  EXPECT_EQ(go_json_string("\xE2\x80\xA8"), "\"\\u2028\"");
  EXPECT_EQ(go_json_string("\xFF ok \xC3\xA9"), "\"\\ufffd ok \xC3\xA9\"");
}

TEST(GoJson, Numbers) {
  EXPECT_EQ(go_json_float32(0.8f), "0.8");
  EXPECT_EQ(go_json_float32(0.7f), "0.7");
  EXPECT_EQ(go_json_float32(1.0f), "1");
  EXPECT_EQ(go_json_float32(-2.5f), "-2.5");
  EXPECT_EQ(go_json_float64(1e21), "1e+21");
  EXPECT_EQ(go_json_float64(1e-7), "1e-7");
  EXPECT_EQ(go_json_float64(123456789.0), "123456789");
  EXPECT_EQ(go_format_v(0.8), "0.8");
  EXPECT_EQ(go_format_v(256), "256");
  EXPECT_EQ(go_format_v(1e6), "1e+06");
  EXPECT_EQ(go_format_v(0.00001), "1e-05");
  EXPECT_EQ(go_quote("a\"b\n"), "\"a\\\"b\\n\"");
}

TEST(Params, FromAndToJson) {
  const std::string fixture =
      "{\"num_ctx\":256,\"stop\":[\"\\u003c/s\\u003e\",\"\\u003c|im_end|\\u003e\"],\"temperature\":0.8}\n";
  auto p = Params::from_json(fixture);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->to_json(), fixture);
  EXPECT_FALSE(Params::from_json("{\"num_ctx\":\"big\"}").ok());
  EXPECT_FALSE(Params::from_json("{\"stop\":[1]}").ok());
  EXPECT_FALSE(Params::from_json("[1]").ok());
  Params q;
  ASSERT_TRUE(q.set("seed", "+42").is_ok());
  ASSERT_TRUE(q.set("use_mmap", "T").is_ok());
  EXPECT_EQ(q.to_json(), "{\"seed\":42,\"use_mmap\":true}\n");
  EXPECT_FALSE(q.set("seed", "4.2").is_ok());
  EXPECT_FALSE(q.set("seed", "99999999999999999999").is_ok());
}

TEST(Params, Messages) {
  const std::string fixture =
      "[{\"role\":\"user\",\"content\":\"Tell me a story.\"},{\"role\":\"assistant\",\"content\":\"Once upon "
      "a "
      "time, there was a cat.\"}]";
  auto m = messages_from_json(fixture);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(messages_to_json(*m), fixture);
  EXPECT_FALSE(messages_from_json("[{\"content\":\"x\"}]").ok());
}

}  // namespace
}  // namespace paddock::store
