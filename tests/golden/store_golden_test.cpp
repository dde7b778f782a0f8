// Golden tests of the store against ../shared/fixtures/ollama-store (written by Ollama's
// rules) and models/stories260K.gguf: list/show/copy/delete of a copy of the fixture,
// byte-identical manifests from create, kill-at-any-point crash safety, concurrent writers.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <set>

#include "base/mapped_file.h"
#include "base/sha256.h"
#include "store/create.h"
#include "store/store.h"
#include "tests/support/fixtures.h"

namespace paddock::store {
namespace {

namespace fs = std::filesystem;

const std::string kModelHex = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d";
const std::string kSystemHex = "7919d2501176dbb7e13928d116e88d6f38067d9ef27cfd43f6b9be84b7acbc8f";
const std::string kLicenseHex = "6d323c1fae03f5c8c44aee9b0aa1c0229d2d1baa380994849c4ca11d5f0ad6b3";
const std::string kConfigHex = "8d749008789177ca4bf2c473d23ec82a18282458ccccdcb7e8dd2d369e41099f";

std::string numbered(std::string prefix, int i) {
  prefix += std::to_string(i);
  return prefix;
}

std::string fixture_store() { return testing::fixtures_dir() + "/ollama-store"; }
std::string gguf_path() { return testing::fixtures_dir() + "/models/stories260K.gguf"; }

std::string slurp(const std::string& path) {
  auto r = read_file(path);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : std::string();
}

Name name(std::string_view s) {
  auto n = Name::parse(s);
  EXPECT_TRUE(n.ok()) << s;
  return n.value();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "paddock-store-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A writable copy of the fixture store.
std::string copy_fixture(const TempDir& dir) {
  const std::string root = dir.path() + "/models";
  fs::copy(fixture_store(), root, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(root))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  return root;
}

bool blob_exists(const std::string& root, const std::string& hex) {
  return fs::exists(root + "/blobs/sha256-" + hex);
}

// Every manifest's blobs exist and hash-verify, and every visible blob is complete.
void expect_consistent(Store& s) {
  auto models = s.list();
  ASSERT_TRUE(models.ok());
  for (const auto& m : *models) EXPECT_TRUE(s.verify(m.name).is_ok()) << m.name.display_shortest();
  for (const auto& e : fs::directory_iterator(s.root() + "/blobs")) {
    const std::string n = e.path().filename().string();
    if (n.rfind(".paddock-tmp-", 0) == 0) continue;  // invisible until renamed
    ASSERT_TRUE(Digest::is_valid(n)) << "unexpected file in blobs/: " << n;
    auto hex = sha256_file_hex(e.path().string());
    ASSERT_TRUE(hex.ok());
    EXPECT_EQ("sha256-" + *hex, n) << "partial or corrupt blob visible";
  }
}

TEST(StoreGolden, ListsTheFixtureStore) {
  PADDOCK_REQUIRE_FIXTURES();
  TempDir dir;
  auto s = Store::open(copy_fixture(dir));
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto models = s->list();
  ASSERT_TRUE(models.ok());
  ASSERT_EQ(models->size(), 3u);
  std::set<std::string> names;
  for (const auto& m : *models) {
    names.insert(m.name.display_shortest());
    const std::string bytes = slurp(s->root() + "/manifests/" + m.name.manifest_path());
    EXPECT_EQ(m.digest, sha256_hex(bytes));
    EXPECT_EQ(m.config.model_family, "llama");
    EXPECT_EQ(m.config.model_type, "292.10K");
    EXPECT_EQ(m.config.file_type, "F32");
    EXPECT_EQ(m.config.model_format, "gguf");
  }
  EXPECT_EQ(names, (std::set<std::string>{"stories:latest", "stories:chat", "example.com/alice/stories:v1"}));
  for (const auto& m : *models) {
    if (m.name.display_shortest() == "stories:latest") {
      EXPECT_EQ(m.size, 1185376u + 150 + 102 + 41 + 83 + 44);
    }
  }
}

TEST(StoreGolden, ShowsLayerContents) {
  PADDOCK_REQUIRE_FIXTURES();
  TempDir dir;
  auto s = Store::open(copy_fixture(dir));
  ASSERT_TRUE(s.ok());
  auto latest = s->show(name("Stories:LATEST"));  // case-insensitive
  ASSERT_TRUE(latest.ok()) << latest.status().message();
  EXPECT_EQ(latest->name.display_shortest(), "stories:latest");
  EXPECT_EQ(latest->model_path, s->root() + "/blobs/sha256-" + kModelHex);
  EXPECT_EQ(*latest->template_text,
            "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end "
            "}}<|im_start|>assistant\n");
  EXPECT_EQ(latest->system, "You are a storyteller for small children.");
  EXPECT_EQ(latest->licenses, std::vector<std::string>{"MIT License (the TinyStories llama2.c model)"});
  EXPECT_EQ(std::get<int64_t>(latest->params.values().at("num_ctx")), 256);
  EXPECT_EQ(std::get<std::vector<std::string>>(latest->params.values().at("stop")),
            (std::vector<std::string>{"</s>", "<|im_end|>"}));
  EXPECT_TRUE(latest->messages.empty());
  const std::string mf = render_modelfile(*latest);
  EXPECT_EQ(mf.rfind("# Modelfile generated by \"ollama show\"\n", 0), 0u);
  EXPECT_NE(mf.find("# FROM stories:latest\n\nFROM " + latest->model_path + "\n"), std::string::npos);
  EXPECT_NE(mf.find("PARAMETER stop </s>\nPARAMETER stop <|im_end|>\nPARAMETER temperature 0.8\n"),
            std::string::npos);
  EXPECT_NE(mf.find("SYSTEM You are a storyteller for small children.\n"), std::string::npos);
  EXPECT_NE(render_parameters(latest->params).find("stop                           \"</s>\""),
            std::string::npos);

  auto chat = s->show(name("stories:chat"));
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(chat->messages, (std::vector<Message>{{"user", "Tell me a story."},
                                                  {"assistant", "Once upon a time, there was a cat."}}));
  EXPECT_TRUE(chat->system.empty());
  auto v1 = s->show(name("example.com/alice/stories:v1"));
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1->parent_model, "stories:latest");
  EXPECT_EQ(v1->model_path, latest->model_path);
  EXPECT_EQ(s->show(name("nothere")).status().code(), Code::kNotFound);
  EXPECT_TRUE(s->verify(name("stories")).is_ok());
}

TEST(StoreGolden, RefusesTamperedBlobs) {
  PADDOCK_REQUIRE_FIXTURES();
  TempDir dir;
  const std::string root = copy_fixture(dir);
  auto s = Store::open(root);
  ASSERT_TRUE(s.ok());
  {  // same size, different bytes: the digest no longer matches
    std::FILE* f = std::fopen((root + "/blobs/sha256-" + kSystemHex).c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fputc('X', f);
    std::fclose(f);
  }
  auto shown = s->show(name("stories"));
  ASSERT_FALSE(shown.ok());
  EXPECT_NE(shown.status().message().find("hashes to"), std::string::npos) << shown.status().message();
  EXPECT_TRUE(s->show(name("stories:chat")).ok());  // does not use that blob
  fs::resize_file(root + "/blobs/sha256-" + kModelHex, 100);
  auto chat = s->show(name("stories:chat"));
  ASSERT_FALSE(chat.ok());
  EXPECT_NE(chat.status().message().find("manifest says 1185376"), std::string::npos)
      << chat.status().message();
}

TEST(StoreGolden, CopyAndDeleteKeepSharedBlobs) {
  PADDOCK_REQUIRE_FIXTURES();
  TempDir dir;
  const std::string root = copy_fixture(dir);
  auto s = Store::open(root);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->copy(name("stories"), name("alice/mine:v2")).is_ok());
  EXPECT_EQ(slurp(root + "/manifests/registry.ollama.ai/alice/mine/v2"),
            slurp(root + "/manifests/registry.ollama.ai/library/stories/latest"));
  EXPECT_EQ(s->copy(name("missing"), name("x")).code(), Code::kNotFound);

  ASSERT_TRUE(s->remove(name("stories:latest")).is_ok());
  EXPECT_TRUE(blob_exists(root, kModelHex));
  EXPECT_TRUE(blob_exists(root, kSystemHex));  // still used by the copy
  ASSERT_TRUE(s->remove(name("alice/mine:v2")).is_ok());
  EXPECT_FALSE(blob_exists(root, kSystemHex));
  EXPECT_FALSE(blob_exists(root, kLicenseHex));
  EXPECT_FALSE(fs::exists(root + "/manifests/registry.ollama.ai/alice"));  // empty dirs pruned
  EXPECT_TRUE(blob_exists(root, kModelHex));
  ASSERT_TRUE(s->remove(name("stories:chat")).is_ok());
  EXPECT_TRUE(blob_exists(root, kModelHex));
  EXPECT_TRUE(blob_exists(root, kConfigHex));
  ASSERT_TRUE(s->remove(name("example.com/alice/stories:v1")).is_ok());
  EXPECT_FALSE(blob_exists(root, kModelHex));
  EXPECT_FALSE(blob_exists(root, kConfigHex));
  EXPECT_TRUE(fs::is_empty(root + "/blobs"));
  EXPECT_EQ(s->remove(name("stories")).code(), Code::kNotFound);
}

std::string fixture_text(const std::string& hex) { return slurp(fixture_store() + "/blobs/sha256-" + hex); }

std::string latest_modelfile() {
  std::string t = fixture_text("e3b2721cec511e3a627ae0993753abbf5c72cdf4cfcdbc8f5c33ce15c4c4e04b");
  return "FROM " + gguf_path() + "\nTEMPLATE \"\"\"" + t + "\"\"\"\nSYSTEM " + fixture_text(kSystemHex) +
         "\nPARAMETER num_ctx 256\nPARAMETER stop </s>\nPARAMETER stop <|im_end|>\nPARAMETER temperature "
         "0.8\n"
         "LICENSE " +
         fixture_text(kLicenseHex) + "\n";
}

TEST(StoreGolden, CreateMatchesOllamaBytes) {
  PADDOCK_REQUIRE_FIXTURES();
  TempDir dir;
  auto s = Store::open(dir.path() + "/models");
  ASSERT_TRUE(s.ok());
  std::vector<std::string> statuses;
  CreateOptions opts;
  opts.on_progress = [&](const CreateProgress& p) { statuses.push_back(p.status); };
  Status st = create_model(*s, name("stories"), latest_modelfile(), opts);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_GE(statuses.size(), 4u);
  EXPECT_EQ(statuses.front(), "parsing modelfile");
  EXPECT_EQ(statuses[1], "creating new layer sha256:" + kModelHex);
  EXPECT_EQ(statuses[statuses.size() - 2], "writing manifest");
  EXPECT_EQ(statuses.back(), "success");
  const std::string ours = slurp(s->root() + "/manifests/registry.ollama.ai/library/stories/latest");
  const std::string theirs = slurp(fixture_store() + "/manifests/registry.ollama.ai/library/stories/latest");
  auto ours_m = Manifest::parse(ours);
  auto theirs_m = Manifest::parse(theirs);
  ASSERT_TRUE(ours_m.ok() && theirs_m.ok());
  ASSERT_EQ(ours_m->layers.size(), theirs_m->layers.size());
  for (size_t i = 0; i < ours_m->layers.size(); ++i) {
    EXPECT_EQ(ours_m->layers[i].media_type, theirs_m->layers[i].media_type) << i;
    EXPECT_EQ(ours_m->layers[i].digest, theirs_m->layers[i].digest) << ours_m->layers[i].media_type;
  }
  // The config names the machine and the parameter-count label; everything else must be
  // Ollama's bytes. (The fixture's label "292.10K" does not follow from the GGUF's 292800
  // parameters under any rule we know; ours says "292.80K".)
  auto our_cfg = read_file(s->blob_path(ours_m->config.digest));
  ASSERT_TRUE(our_cfg.ok());
  std::string their_cfg = fixture_text(kConfigHex);
  their_cfg.replace(their_cfg.find("292.10K"), 7, parameter_count_label(292800));
  if (go_arch() == "amd64" && go_os() == "linux") {
    EXPECT_EQ(*our_cfg, their_cfg);
    std::string expected = theirs;
    expected.replace(expected.find(kConfigHex), 64, sha256_hex(their_cfg));
    EXPECT_EQ(ours, expected);
  }
  EXPECT_TRUE(s->verify(name("stories")).is_ok());

  // Same content again: every layer is reused, the manifest is unchanged.
  statuses.clear();
  ASSERT_TRUE(create_model(*s, name("STORIES"), latest_modelfile(), opts).is_ok());
  EXPECT_EQ(statuses[1], "using existing layer sha256:" + kModelHex);
  EXPECT_EQ(slurp(s->root() + "/manifests/registry.ollama.ai/library/stories/latest"), ours);

  // FROM an existing model: layers are inherited with "from", new ones replace.
  const std::string derived = "FROM stories\nSYSTEM Be brief.\nPARAMETER temperature 0.5\nMESSAGE user hi\n";
  ASSERT_TRUE(create_model(*s, name("alice/brief"), derived, opts).is_ok());
  auto info = s->show(name("alice/brief"));
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->parent_model, "stories:latest");
  EXPECT_EQ(info->system, "Be brief.");
  EXPECT_EQ(std::get<int64_t>(info->params.values().at("num_ctx")), 256);  // merged from the base
  EXPECT_EQ(std::get<double>(info->params.values().at("temperature")), 0.5);
  EXPECT_EQ(info->licenses.size(), 1u);
  EXPECT_EQ(info->messages.size(), 1u);
  EXPECT_EQ(info->config.model_type, "292.80K");

  // FROM a blob digest.
  ASSERT_TRUE(create_model(*s, name("byblob"), "FROM sha256:" + kModelHex + "\n", opts).is_ok());
  EXPECT_EQ(s->show(name("byblob"))->model_path, s->root() + "/blobs/sha256-" + kModelHex);

  // Replacing a model removes the blobs only it used.
  ASSERT_TRUE(create_model(*s, name("alice/brief"), "FROM stories\nSYSTEM Be briefer.\n", opts).is_ok());
  EXPECT_FALSE(fs::exists(s->root() + "/blobs/sha256-" + sha256_hex("Be brief.")));

  // Errors: not GGUF, unknown model, no quantizer.
  const std::string not_gguf = dir.path() + "/notes.txt";
  {
    std::FILE* f = std::fopen(not_gguf.c_str(), "w");
    std::fputs("hello", f);
    std::fclose(f);
  }
  Status e = create_model(*s, name("bad"), "FROM " + not_gguf + "\n", opts);
  EXPECT_NE(e.message().find("not in GGUF format"), std::string::npos) << e.message();
  EXPECT_EQ(create_model(*s, name("bad"), "FROM nosuchmodel\n", opts).code(), Code::kNotFound);
  CreateOptions q = opts;
  q.quantize = "q4_K_M";
  EXPECT_EQ(create_model(*s, name("bad"), latest_modelfile(), q).code(), Code::kUnsupported);
  EXPECT_FALSE(s->resolve(name("bad")).ok());
}

// Runs fn in a child process; returns its wait status.
template <typename F>
int in_child(F fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    fn();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(StoreGolden, KilledCreatesLeaveTheStoreConsistent) {
  PADDOCK_REQUIRE_FIXTURES();
  TempDir dir;
  const std::string root = dir.path() + "/models";
  ASSERT_TRUE(Store::open(root).ok());
  // Kill the creating process at every write point (the hook names them), one per run.
  int killed = 0;
  for (int point = 1; point < 40; ++point) {
    const std::string fresh = numbered(dir.path() + "/point", point);
    const int status = in_child([&] {
      auto s = Store::open(fresh);
      int seen = 0;
      s->set_fault_hook([&](std::string_view) {
        if (++seen == point) ::raise(SIGKILL);
      });
      const std::string mf = latest_modelfile() + numbered("SYSTEM run ", point) + "\n";
      if (!create_model(*s, name(numbered("crash", point)), mf, {}).is_ok()) ::_exit(3);
    });
    if (WIFSIGNALED(status)) {
      ++killed;
    } else {
      ASSERT_EQ(WEXITSTATUS(status), 0);
      break;  // the create ran past its last write point
    }
    auto s = Store::open(fresh);
    expect_consistent(*s);
  }
  // A fresh create passes 14 write points: 6 blobs (model, template, system, params, license,
  // config; each temp written, renamed) and the manifest.
  EXPECT_EQ(killed, 14);
  // Kills at random moments (not only at the hook points).
  std::mt19937 rng(1234);
  for (int i = 0; i < 8; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      auto s = Store::open(root);
      for (int k = 0;; ++k)
        (void)create_model(*s, name(numbered("rand", k)), latest_modelfile() + numbered("SYSTEM r", k) + "\n",
                           {});
    }
    ::usleep(std::uniform_int_distribution<int>(1000, 60000)(rng));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    auto s = Store::open(root);
    expect_consistent(*s);
  }
  auto s = Store::open(root);
  auto report = s->prune(std::chrono::seconds(0));
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (const auto& e : fs::directory_iterator(root + "/blobs"))
    EXPECT_NE(e.path().filename().string().rfind(".paddock-tmp-", 0), 0u) << "temp file survived prune";
  expect_consistent(*s);
}

TEST(StoreGolden, TwoProcessesWriteAtOnce) {
  PADDOCK_REQUIRE_FIXTURES();
  TempDir dir;
  const std::string root = dir.path() + "/models";
  ASSERT_TRUE(Store::open(root).ok());
  constexpr int kRounds = 6;
  const auto creator = [&] {
    auto s = Store::open(root);
    for (int i = 0; i < kRounds; ++i)
      if (!create_model(*s, name(numbered("a", i)), latest_modelfile(), {}).is_ok()) ::_exit(4);
  };
  // The other process creates models sharing the same blobs and deletes them again, so its
  // collections race with the first one's creates.
  const auto churner = [&] {
    auto s = Store::open(root);
    for (int i = 0; i < kRounds; ++i) {
      if (!create_model(*s, name(numbered("b", i)), latest_modelfile() + "SYSTEM b\n", {}).is_ok())
        ::_exit(5);
      if (!s->remove(name(numbered("b", i))).is_ok()) ::_exit(6);
    }
  };
  const pid_t a = ::fork();
  if (a == 0) {
    creator();
    ::_exit(0);
  }
  const pid_t b = ::fork();
  if (b == 0) {
    churner();
    ::_exit(0);
  }
  int sa = 0, sb = 0;
  ::waitpid(a, &sa, 0);
  ::waitpid(b, &sb, 0);
  ASSERT_TRUE(WIFEXITED(sa) && WEXITSTATUS(sa) == 0) << sa;
  ASSERT_TRUE(WIFEXITED(sb) && WEXITSTATUS(sb) == 0) << sb;
  auto s = Store::open(root);
  for (int i = 0; i < kRounds; ++i) EXPECT_TRUE(s->verify(name(numbered("a", i))).is_ok()) << i;
  EXPECT_EQ(s->list()->size(), static_cast<size_t>(kRounds));
  expect_consistent(*s);
}

}  // namespace
}  // namespace paddock::store
