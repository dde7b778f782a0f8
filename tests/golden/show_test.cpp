// Golden: every fixture .gguf parses, and `paddock show --json` reports the architecture, exact
// parameter count, tensor types and file type that an independent stdlib-Python parser
// (show_oracle.py) finds. Also: the exit code and message for missing and corrupt files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gguf/gguf.h"
#include "tests/support/fixtures.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code;
  std::string output;
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Outcome run(const std::string& cmd) {
  Outcome r{-1, ""};
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string paddock_bin() {
  const char* b = std::getenv("PADDOCK_BIN");
  return b ? b : "";
}

std::vector<fs::path> ggufs_in(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".gguf") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// llama_ftype ids of the fixtures, written out here independently of src/gguf/summary.cpp.
const std::map<int, std::string> kFileTypeNames = {
    {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},       {7, "Q8_0"},
    {8, "Q5_0"},    {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"},    {12, "Q3_K_M"},
    {14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"},    {18, "Q6_K"},
    {25, "IQ4_NL"}, {30, "IQ4_XS"}, {32, "BF16"},   {38, "MXFP4_MOE"},
};

TEST(ShowGolden, EveryFixtureGgufParses) {
  PADDOCK_REQUIRE_FIXTURES();
  size_t n = 0;
  for (const char* sub : {"/models", "/tokenizer"}) {
    for (const fs::path& p : ggufs_in(paddock::testing::fixtures_dir() + sub)) {
      auto f = paddock::gguf::File::open(p.string(), paddock::gguf::Layout::kAsStored);
      EXPECT_TRUE(f.ok()) << p << ": " << f.status().message();
      ++n;
    }
  }
  EXPECT_GT(n, 20u);
}

TEST(ShowGolden, JsonMatchesIndependentParser) {
  PADDOCK_REQUIRE_FIXTURES();
  ASSERT_FALSE(paddock_bin().empty()) << "PADDOCK_BIN not set";
  size_t n = 0;
  for (const fs::path& p : ggufs_in(paddock::testing::fixtures_dir() + "/models")) {
    SCOPED_TRACE(p.string());
    const Outcome oracle = run(std::string(PADDOCK_PYTHON) + " " + shell_quote(PADDOCK_SHOW_ORACLE) + " " +
                               shell_quote(p.string()));
    ASSERT_EQ(oracle.exit_code, 0) << oracle.output;
    const Outcome ours = run(shell_quote(paddock_bin()) + " show --json " + shell_quote(p.string()));
    ASSERT_EQ(ours.exit_code, 0) << ours.output;
    const auto want = nlohmann::json::parse(oracle.output);
    const auto got = nlohmann::json::parse(ours.output);
    EXPECT_EQ(got["architecture"], want["architecture"]);
    EXPECT_EQ(got["parameters"], want["parameters"]);
    EXPECT_GT(got["parameters"].get<uint64_t>(), 0u);
    EXPECT_EQ(got["tensor_types"], want["tensor_types"]);
    if (want["file_type_id"].is_number()) {
      const int id = want["file_type_id"].get<int>();
      ASSERT_TRUE(kFileTypeNames.count(id)) << "fixture file type " << id << " not in the test's table";
      EXPECT_EQ(got["file_type"], kFileTypeNames.at(id));
    } else {
      EXPECT_TRUE(got["file_type"].is_null());
    }
    for (const char* key : {"context_length", "embedding_length", "chat_template", "license", "tokenizer"}) {
      EXPECT_TRUE(got.contains(key)) << key;
    }
    EXPECT_TRUE(got["tokenizer"]["vocab_size"].is_number());
    ++n;
  }
  EXPECT_GT(n, 10u);
}

TEST(ShowGolden, TextOutputNamesTheModel) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::string path = paddock::testing::fixtures_dir() + "/models/stories260K.gguf";
  const Outcome r = run(shell_quote(paddock_bin()) + " show " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("architecture        llama"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("parameters          292.8K"), std::string::npos) << r.output;
  const Outcome v = run(shell_quote(paddock_bin()) + " show -v " + shell_quote(path));
  ASSERT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("(512 items)]"), std::string::npos);
  EXPECT_NE(v.output.find("token_embd.weight"), std::string::npos);
}

// These need only the binary, not the fixtures.
TEST(ShowErrors, MissingAndCorruptFilesExitOneNamingTheFile) {
  ASSERT_FALSE(paddock_bin().empty()) << "PADDOCK_BIN not set";
  const fs::path dir = fs::temp_directory_path() / ("paddock_show_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string missing = (dir / "missing.gguf").string();
  Outcome r = run(shell_quote(paddock_bin()) + " show " + shell_quote(missing) + " 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(missing), std::string::npos) << r.output;

  const std::string corrupt = (dir / "corrupt.gguf").string();
  std::ofstream(corrupt, std::ios::binary).write("GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff", 16);
  r = run(shell_quote(paddock_bin()) + " show --json " + shell_quote(corrupt) + " 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(corrupt), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("at byte"), std::string::npos) << r.output;

  // A model name goes to the server; with none reachable (and no autostart) a clear error.
  r = run("PADDOCK_NOAUTOSTART=1 PADDOCK_HOST=127.0.0.1:1 " + shell_quote(paddock_bin()) +
          " show some-model:latest 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("Error: "), std::string::npos) << r.output;
  r = run(shell_quote(paddock_bin()) + " show --nonsense 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  fs::remove_all(dir);
}

}  // namespace
