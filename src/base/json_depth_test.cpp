#include "base/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace paddock {
namespace {

std::string nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonDepth, CountsArraysAndObjects) {
  EXPECT_FALSE(json_too_deep("", 0));
  EXPECT_FALSE(json_too_deep("5", 0));
  EXPECT_TRUE(json_too_deep("[]", 0));
  EXPECT_FALSE(json_too_deep(nested(3), 3));
  EXPECT_TRUE(json_too_deep(nested(4), 3));
  EXPECT_TRUE(json_too_deep(R"({"a":{"b":[{}]}})", 3));
  EXPECT_FALSE(json_too_deep(R"({"a":{"b":[{}]}})", 4));
  // Siblings do not add up: depth is the deepest point, not the bracket count.
  EXPECT_FALSE(json_too_deep("[[],[],[[]],{}]", 3));
}

TEST(JsonDepth, BracketsInStringsDoNotCount) {
  EXPECT_FALSE(json_too_deep(R"(["[[[[{{{{"])", 1));
  EXPECT_FALSE(json_too_deep(R"(["\"[[[[", "x"])", 1));  // an escaped quote does not end the string
  EXPECT_FALSE(json_too_deep(R"(["\\", "x"])", 1));      // an escaped backslash does
  EXPECT_TRUE(json_too_deep(R"(["\\", [["x"]]])", 2));
}

TEST(JsonDepth, DefaultLimitAndHostileSizes) {
  EXPECT_FALSE(json_too_deep(nested(kMaxJsonDepth)));
  EXPECT_TRUE(json_too_deep(nested(kMaxJsonDepth + 1)));
  EXPECT_TRUE(json_too_deep(nested(100000, '{', '}')));
  // Unbalanced closers (invalid JSON) never go below zero and hide a deep tail.
  EXPECT_TRUE(json_too_deep(std::string(1000, ']') + nested(kMaxJsonDepth + 1)));
}

}  // namespace
}  // namespace paddock
