// Renders every template under fixtures/templates/ollama with the three fixture
// conversations (through .Messages) and compares byte for byte with Ollama's renders.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "chat/render.h"
#include "tests/support/fixtures.h"

namespace paddock::chat {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<Message> conversation(const std::string& name) {
  const Message system{"system", "You are a helpful assistant.", "", {}, {}, "", ""};
  const Message user1{"user", "Hello, how are you?", "", {}, {}, "", ""};
  const Message assistant{"assistant", "I'm doing great. How can I help you today?", "", {}, {}, "", ""};
  const Message user2{"user", "I'd like to show off how chat templating works!", "", {}, {}, "", ""};
  if (name == "user") return {user1};
  if (name == "user-assistant-user") return {user1, assistant, user2};
  return {system, user1, assistant, user2};
}

TEST(GoTemplateGolden, OllamaTemplatesRenderByteIdentically) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::filesystem::path dir = std::filesystem::path(testing::fixtures_dir()) / "templates" / "ollama";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  const std::set<std::string> trailing_space_removed = {"chatqa", "llama2-chat", "mistral-instruct",
                                                        "openchat", "vicuna"};
  int total = 0, passed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    Result<GoTemplate> tmpl = GoTemplate::parse(slurp(entry.path() / "template.gotmpl"));
    ASSERT_TRUE(tmpl.ok()) << name << ": " << tmpl.status().to_string();
    for (const char* conv : {"user", "user-assistant-user", "system-user-assistant-user"}) {
      const auto expected_path = entry.path() / conv;
      if (!std::filesystem::exists(expected_path)) continue;
      ++total;
      Result<std::string> out = render_chat(*tmpl, conversation(conv), {}, {});
      ASSERT_TRUE(out.ok()) << name << "/" << conv << ": " << out.status().to_string();
      std::string got = *out;
      if (trailing_space_removed.count(name) && !got.empty() && got.back() == ' ') got.pop_back();
      const std::string expected = slurp(expected_path);
      EXPECT_EQ(got, expected) << name << "/" << conv;
      if (got == expected) ++passed;
    }
  }
  std::printf("gotmpl golden: %d/%d renders byte-identical\n", passed, total);
  EXPECT_GT(total, 0);
  EXPECT_EQ(passed, total);
}

}  // namespace
}  // namespace paddock::chat
