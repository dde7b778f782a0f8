// Where the shared fixtures are (PADDOCK_FIXTURES, set by CTest; default ../shared/fixtures).
// Golden tests call PADDOCK_REQUIRE_FIXTURES() first: without fixtures they skip loudly.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace paddock::testing {

inline std::string fixtures_dir() {
  if (const char* v = std::getenv("PADDOCK_FIXTURES"); v && *v) return v;
  return "../shared/fixtures";
}

inline bool fixtures_present() { return std::filesystem::is_directory(fixtures_dir() + "/models"); }

}  // namespace paddock::testing

#define PADDOCK_REQUIRE_FIXTURES()                                                           \
  do {                                                                                       \
    if (!::paddock::testing::fixtures_present())                                             \
      GTEST_SKIP() << "SKIPPED LOUDLY: fixtures not found at " << ::paddock::testing::fixtures_dir() \
                   << " (set PADDOCK_FIXTURES)";                                             \
  } while (0)
