#include "base/log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace paddock {
namespace {

TEST(Log, EscapeControlCharactersQuotesAndBackslashes) {
  EXPECT_EQ(log_escape("plain text é"), "plain text é");
  EXPECT_EQ(log_escape("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(log_escape("say \"hi\" \\ bye"), "say \\\"hi\\\" \\\\ bye");
  EXPECT_EQ(log_escape(std::string("nul\0bel\a del\x7f", 13)), "nul\\x00bel\\x07 del\\x7f");
}

TEST(Log, AMessageCannotForgeALine) {
  ::testing::internal::CaptureStderr();
  log_warn("x\"\ntime=2026-01-01T00:00:00 level=ERROR msg=\"forged");
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("level=WARN msg=\"x\\\"\\ntime="), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("msg=\\\"forged\"\n")) << out;
}

}  // namespace
}  // namespace paddock
