// war-and-peace.txt tokenised as one string (add_special=false): the sha256 of the ids as
// little-endian int32 must equal llama.cpp's (fixtures/README.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "base/sha256.h"
#include "gguf/gguf.h"
#include "tests/support/fixtures.h"
#include "tokenizer/tokenizer.h"

namespace paddock {
namespace {

void check(const std::string& vocab, size_t n_expected, const std::string& sha_expected) {
  const std::string dir = testing::fixtures_dir() + "/tokenizer/";
  auto file = gguf::File::open(dir + vocab);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto tok = Tokenizer::load(**file);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  auto text = read_file(dir + "war-and-peace.txt");
  ASSERT_TRUE(text.ok());
  const std::vector<int32_t> ids = (*tok)->encode(*text, false, false);
  EXPECT_EQ(ids.size(), n_expected);
  Sha256 h;
  for (const int32_t id : ids) {
    const auto u = static_cast<uint32_t>(id);
    const unsigned char le[4] = {static_cast<unsigned char>(u), static_cast<unsigned char>(u >> 8),
                                 static_cast<unsigned char>(u >> 16), static_cast<unsigned char>(u >> 24)};
    h.update(le, 4);
  }
  EXPECT_EQ(h.hex_digest(), sha_expected);
}

TEST(TokenizerWarAndPeace, Llama3) {
  PADDOCK_REQUIRE_FIXTURES();
  check("vocab-llama3.gguf", 760377, "5aeb2996f41276ebe292a97c19d40ad45b98a084e8481a1f4ef8f2bedb3da987");
}

TEST(TokenizerWarAndPeace, LlamaSpm) {
  PADDOCK_REQUIRE_FIXTURES();
  check("ggml-vocab-llama-spm.gguf", 859224,
        "cddaab88677df61d7725c6fb071a67c848463ab07eb7bddb5179618d1483d7a5");
}

}  // namespace
}  // namespace paddock
