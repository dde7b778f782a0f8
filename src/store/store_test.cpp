#include "store/store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "base/sha256.h"

namespace paddock::store {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "paddock-store-unit-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    auto s = Store::open(dir_ + "/models");
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::make_unique<Store>(std::move(s).value());
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& rel, const std::string& bytes) {
    const fs::path p = store_->root() + "/" + rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
  size_t blob_files() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(store_->root() + "/blobs")) ++n;
    return n;
  }
  // A small valid model: a fake weights blob, a system layer and a config.
  Manifest small_model() {
    Manifest m;
    auto cfg = store_->import_blob_bytes("{\"model_format\":\"gguf\"}");
    auto w = store_->import_blob_bytes("weights");
    auto sys = store_->import_blob_bytes("be kind");
    EXPECT_TRUE(cfg.ok() && w.ok() && sys.ok());
    m.config = {std::string(kMediaConfig), *cfg, 23, "", ""};
    m.layers = {{std::string(kMediaModel), *w, 7, "", ""}, {std::string(kMediaSystem), *sys, 7, "", ""}};
    return m;
  }
  Name name(std::string_view s) { return Name::parse(s).value(); }

  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, ImportVerifiesAndDeduplicates) {
  auto d = store_->import_blob_bytes("hello");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->hex(), sha256_hex("hello"));
  EXPECT_TRUE(store_->has_blob(*d));
  auto again = store_->import_blob_bytes("hello");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(blob_files(), 1u);
  const auto wrong = Digest::parse("sha256:" + std::string(64, '0')).value();
  const std::string src = dir_ + "/src.bin";
  std::ofstream(src) << "other";
  auto bad = store_->import_blob_file(src, wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("digest mismatch"), std::string::npos);
  EXPECT_EQ(blob_files(), 1u);  // the temp file is gone
  EXPECT_TRUE(store_->import_blob_file(src, Digest::from_hex(sha256_hex("other")).value()).ok());
}

TEST_F(StoreTest, ManifestRoundTripAndDefaults) {
  const Manifest m = small_model();
  ASSERT_TRUE(store_->write_manifest(name("Tiny:v1"), m).is_ok());
  auto info = store_->show(name("tiny:V1"));
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->name.display_shortest(), "Tiny:v1");  // on-disk casing
  EXPECT_EQ(info->system, "be kind");
  auto list = store_->list();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].size, 23u + 7 + 7);
  EXPECT_EQ((*list)[0].config.model_format, "gguf");
  // @digest must match the manifest bytes.
  const std::string digest = (*list)[0].digest;
  EXPECT_TRUE(store_->read_manifest(name("tiny:v1@sha256:" + digest)).ok());
  EXPECT_FALSE(store_->read_manifest(name("tiny:v1@sha256:" + std::string(64, 'b'))).ok());
}

TEST_F(StoreTest, RefusesManifestsWithMissingBlobs) {
  Manifest m = small_model();
  m.layers.push_back({std::string(kMediaLicense), Digest::from_hex(std::string(64, 'c')).value(), 3, "", ""});
  const Status st = store_->write_manifest(name("broken"), m);
  EXPECT_EQ(st.code(), Code::kNotFound) << st.message();
  m.layers.pop_back();
  m.layers[0].size = 999;
  EXPECT_EQ(store_->write_manifest(name("broken"), m).code(), Code::kCorrupt);
  EXPECT_FALSE(store_->resolve(name("broken")).ok());
}

TEST_F(StoreTest, MaliciousManifestsOnDisk) {
  ASSERT_TRUE(store_->write_manifest(name("good"), small_model()).is_ok());
  write("manifests/registry.ollama.ai/library/junk/latest", "not json at all");
  write("manifests/registry.ollama.ai/library/huge/latest",
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/"
        "vnd.docker.container.image.v1+json\",\"digest\":"
        "\"sha256:" +
            std::string(64, 'a') + "\",\"size\":99999999999999999},\"layers\":[]}");
  write("manifests/registry.ollama.ai/library/..hidden/latest", "{}");
  write("manifests/registry.ollama.ai/library/.tmp/latest", "{}");
  auto list = store_->list();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);  // only the good one
  auto junk = store_->show(name("junk"));
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("not valid JSON"), std::string::npos);
  auto huge = store_->show(name("huge"));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("larger than"), std::string::npos) << huge.status().message();
  // With unreadable manifests around, deletion keeps blobs and prune refuses.
  ASSERT_TRUE(store_->remove(name("good")).is_ok());
  EXPECT_EQ(blob_files(), 3u);
  EXPECT_FALSE(store_->prune(std::chrono::seconds(0)).ok());
}

TEST_F(StoreTest, PruneHonoursGraceAndCleansTemps) {
  ASSERT_TRUE(store_->write_manifest(name("kept"), small_model()).is_ok());
  ASSERT_TRUE(store_->import_blob_bytes("orphan").ok());
  write("blobs/.paddock-tmp-1-0000", "partial");
  auto r = store_->prune(std::chrono::hours(1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->blobs_removed, 0u);  // too fresh: a concurrent create may be about to use it
  r = store_->prune(std::chrono::seconds(0));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->blobs_removed, 1u);
  EXPECT_EQ(r->temp_files_removed, 1u);
  EXPECT_TRUE(store_->verify(name("kept")).is_ok());
  EXPECT_EQ(blob_files(), 3u);
}

TEST_F(StoreTest, DefaultRootFromEnvironment) {
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  ::setenv("PADDOCK_MODELS", "/srv/models", 1);
  EXPECT_EQ(Store::default_root(), "/srv/models");
  ::unsetenv("PADDOCK_MODELS");
  ::setenv("OLLAMA_MODELS", "/srv/ollama", 1);
  EXPECT_EQ(Store::default_root(), "/srv/ollama");
  ::unsetenv("OLLAMA_MODELS");
  ::setenv("HOME", "/home/x", 1);
  EXPECT_EQ(Store::default_root(), "/home/x/.paddock/models");
  ::setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace paddock::store
