// The corrupt-file corpus: every kind of damage gives an error that names the problem (asserted
// on its key words), never a crash, and no parse allocates more than the file justifies.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "gguf/alloc_tracker.h"
#include "gguf/gguf.h"
#include "gguf/summary.h"
#include "gguf/test_bytes.h"
#include "gguf/writer.h"

namespace paddock::gguf {
namespace {

using testing::GgufBytes;
constexpr uint32_t kF32 = 0, kQ4_0 = 2;
constexpr uint64_t kHuge = uint64_t{1} << 40;

// Parses `bytes` expecting failure; returns the message. Checks the allocation bound too:
// a Value per item is at most ~80 bytes and every item takes at least one byte of the file.
std::string error_of(const std::vector<uint8_t>& bytes) {
  testing::reset_largest_allocation();
  auto f = File::parse(bytes);
  EXPECT_LE(testing::largest_allocation(), 128 * bytes.size() + 4096)
      << "allocation not justified by file size";
  if (f.ok()) {
    ADD_FAILURE() << "parsed a corrupt file";
    return "";
  }
  EXPECT_EQ(f.status().code(), Code::kCorrupt);
  return f.status().message();
}

#define EXPECT_ERROR(bytes, ...)                                                            \
  do {                                                                                      \
    const std::string msg_ = error_of(bytes);                                               \
    for (const char* word : {__VA_ARGS__}) {                                                \
      EXPECT_NE(msg_.find(word), std::string::npos) << "'" << word << "' not in: " << msg_; \
    }                                                                                       \
  } while (0)

// header + one F32 tensor [8] at offset 0 with its 32 bytes of data.
std::vector<uint8_t> one_tensor(std::initializer_list<uint64_t> ne, uint32_t type, uint64_t offset,
                                size_t data_bytes = 32) {
  GgufBytes b;
  b.header(3, 1, 0).tensor("w", ne, type, offset).pad(32).zeros(data_bytes);
  return b.take();
}

TEST(Corrupt, HandBuiltValidFileParses) {
  const auto bytes = one_tensor({8}, kF32, 0);
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ((*f)->tensors()[0].n_bytes, 32u);
  GgufBytes v2;
  v2.header(2, 0, 1).kv_u32("a", 1);
  EXPECT_TRUE(File::parse(v2.take()).ok());
}

TEST(Corrupt, Header) {
  EXPECT_ERROR({}, "magic", "at byte 0");
  EXPECT_ERROR(GgufBytes().u32(0x46554747).take(), "version", "at byte 4");
  EXPECT_ERROR(GgufBytes().u32(0x12345678).u32(3).take(), "not a GGUF file", "12345678");
  EXPECT_ERROR(GgufBytes().header(1, 0, 0).take(), "version 1", "not supported");
  EXPECT_ERROR(GgufBytes().header(0x03000000, 0, 0).take(), "big-endian");
  EXPECT_ERROR(GgufBytes().header(4, 0, 0).take(), "unsupported GGUF version 4");
  EXPECT_ERROR(GgufBytes().header(3, 0, uint64_t{1} << 32).take(), "4294967296 metadata entries",
               "cannot fit");
  EXPECT_ERROR(GgufBytes().header(3, UINT64_MAX, 0).take(), "cannot fit");
  EXPECT_ERROR(GgufBytes().header(3, 0, UINT64_MAX / 2).zeros(64).take(), "cannot fit");
}

TEST(Corrupt, Keys) {
  EXPECT_ERROR(GgufBytes().header(3, 0, 1).u64(kHuge).zeros(16).take(), "string length 1099511627776",
               "at byte 24");
  EXPECT_ERROR(GgufBytes().header(3, 0, 1).u64(UINT64_MAX).zeros(16).take(), "string length");
  EXPECT_ERROR(GgufBytes().header(3, 0, 1).kv_u32("", 1).take(), "empty key");
  EXPECT_ERROR(GgufBytes().header(3, 0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2).take(), "duplicate key 'a.b'");
  for (const char* bad : {"\xff", "a\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ab\xe2\x82"}) {
    EXPECT_ERROR(GgufBytes().header(3, 0, 1).kv_u32(bad, 1).take(), "UTF-8");
  }
  EXPECT_ERROR(GgufBytes().header(3, 0, 1).str("k").u32(13).u32(0).take(), "unknown value type 13");
  EXPECT_ERROR(GgufBytes().header(3, 0, 1).str("k").u32(7).u8(2).zeros(8).take(), "bool must be 0 or 1");
  EXPECT_ERROR(GgufBytes().header(3, 0, 1).str("k").u32(8).u64(kHuge).zeros(8).take(), "key 'k'",
               "string length");
}

TEST(Corrupt, Arrays) {
  auto array = [](uint32_t elem, uint64_t count) {
    GgufBytes b;
    b.header(3, 0, 1).str("arr").u32(9).u32(elem).u64(count).zeros(64);
    return b.take();
  };
  EXPECT_ERROR(array(8, kHuge), "array of 1099511627776 string", "needs at least 8796093022208 bytes");
  EXPECT_ERROR(array(8, UINT64_MAX / 4), "2^64");
  EXPECT_ERROR(array(0, kHuge), "array of 1099511627776 u8");
  EXPECT_ERROR(array(9, kHuge), "array of 1099511627776 array");
  EXPECT_ERROR(array(13, 1), "unknown array element type 13");
  EXPECT_ERROR(GgufBytes().header(3, 0, 1).str("arr").u32(9).u32(8).u64(2).u64(1000).zeros(16).take(),
               "key 'arr'", "string length 1000 exceeds the 16 bytes left", "at byte 51");
  // Nesting: an array of arrays of ... of one u8.
  auto nested = [](uint32_t depth) {
    GgufBytes b;
    b.header(3, 0, 1).str("deep").u32(9);
    for (uint32_t d = 1; d < depth; ++d) b.u32(9).u64(1);
    b.u32(0).u64(1).u8(7);
    return b.take();
  };
  const auto deepest_ok = nested(kMaxArrayDepth);  // the File's views point into these bytes
  auto ok = File::parse(deepest_ok);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)->find("deep")->items[0].type, ValueType::kArray);
  EXPECT_ERROR(nested(kMaxArrayDepth + 1), "nested deeper than 8");
  EXPECT_ERROR(nested(100000), "nested deeper");
}

TEST(Corrupt, Alignment) {
  auto with_align = [](uint32_t type, auto write_value) {
    GgufBytes b;
    b.header(3, 1, 1).str("general.alignment").u32(type);
    write_value(b);
    b.tensor("w", {8}, kF32, 0).pad(32).zeros(32);
    return b.take();
  };
  EXPECT_ERROR(with_align(10, [](GgufBytes& b) { b.u64(32); }), "general.alignment", "expected type u32",
               "found u64");
  EXPECT_ERROR(with_align(8, [](GgufBytes& b) { b.str("32"); }), "found string");
  EXPECT_ERROR(with_align(9, [](GgufBytes& b) { b.u32(4).u64(1).u32(32); }), "found array");
  EXPECT_ERROR(with_align(4, [](GgufBytes& b) { b.u32(0); }), "power of two", "found 0");
  EXPECT_ERROR(with_align(4, [](GgufBytes& b) { b.u32(48); }), "power of two", "found 48");
  EXPECT_ERROR(with_align(4, [](GgufBytes& b) { b.u32(1u << 30); }), "data section starts at 1073741824",
               "beyond end of file");
  EXPECT_ERROR(with_align(4, [](GgufBytes& b) { b.u32(1u << 31); }), "beyond end of file");
  // 16 is valid, and offsets must then be multiples of 16 rather than 32.
  EXPECT_TRUE(File::parse(with_align(4, [](GgufBytes& b) { b.u32(16); })).ok());
}

TEST(Corrupt, TensorShapesAndTypes) {
  EXPECT_ERROR(one_tensor({}, kF32, 0), "tensor 0 'w'", "n_dims must be 1 to 4, found 0");
  EXPECT_ERROR(one_tensor({8, 1, 1, 1, 1}, kF32, 0), "found 5");
  EXPECT_ERROR(one_tensor({8, 0}, kF32, 0), "ne[1] must be in [1, 2^63), found 0");
  EXPECT_ERROR(one_tensor({0}, kF32, 0), "ne[0] must be");
  EXPECT_ERROR(one_tensor({8, UINT64_MAX}, kF32, 0), "ne[1] must be");
  EXPECT_ERROR(one_tensor({uint64_t{1} << 32, uint64_t{1} << 32}, kF32, 0), "element count overflows");
  EXPECT_ERROR(one_tensor({uint64_t{1} << 62, 2}, kF32, 0), "element count overflows");
  EXPECT_ERROR(one_tensor({uint64_t{1} << 62}, kF32, 0), "byte size overflows");
  EXPECT_ERROR(one_tensor({8}, 77, 0), "tensor 0 'w'", "unknown tensor type id 77");
  EXPECT_ERROR(one_tensor({8}, 4, 0), "unknown tensor type id 4");  // retired Q4_2
  EXPECT_ERROR(one_tensor({8}, UINT32_MAX, 0), "unknown tensor type id 4294967295");
  EXPECT_ERROR(one_tensor({16}, kQ4_0, 0), "ne[0] = 16 is not a multiple of the Q4_0 block size 32");
  GgufBytes empty_name;
  empty_name.header(3, 1, 0).tensor("", {8}, kF32, 0).pad(32).zeros(32);
  EXPECT_ERROR(empty_name.take(), "tensor 0: empty name");
  GgufBytes bad_name;
  bad_name.header(3, 1, 0).tensor("\xc3", {8}, kF32, 0).pad(32).zeros(32);
  EXPECT_ERROR(bad_name.take(), "UTF-8");
  GgufBytes dup;
  dup.header(3, 2, 0).tensor("w", {8}, kF32, 0).tensor("w", {8}, kF32, 32).pad(32).zeros(64);
  EXPECT_ERROR(dup.take(), "tensor 1 'w': duplicate tensor name");
}

TEST(Corrupt, TensorData) {
  EXPECT_ERROR(one_tensor({8}, kF32, 4), "offset 4 is not a multiple of the alignment 32");
  EXPECT_ERROR(one_tensor({8}, kF32, 0, 31), "tensor 0 'w': data [0, 32)", "beyond end of file");
  EXPECT_ERROR(one_tensor({8}, kF32, 32), "data [32, 64)", "beyond end of file");
  EXPECT_ERROR(one_tensor({8}, kF32, UINT64_MAX - 31), "2^64+", "beyond end of file");
  // Representable but absurd sizes (a petabyte tensor; F32 of SIZE_MAX/4 elements that wraps
  // when padded) are stopped by the end of the file.
  EXPECT_ERROR(one_tensor({uint64_t{1} << 24, uint64_t{1} << 24, 16}, kF32, 0), "beyond end of file");
  EXPECT_ERROR(one_tensor({(uint64_t{1} << 62) - 1}, kF32, 0), "beyond end of file");
  GgufBytes two_huge;  // two I8 tensors of 0x7FFFFFFFFFFFFFC0 bytes: their sum overflows
  two_huge.header(3, 2, 0)
      .tensor("a", {0x7FFFFFFFFFFFFFC0}, 24, 0)
      .tensor("b", {0x7FFFFFFFFFFFFFC0}, 24, 0x7FFFFFFFFFFFFFC0)
      .pad(32)
      .zeros(64);
  EXPECT_ERROR(two_huge.take(), "beyond end of file");
  GgufBytes overlap;
  overlap.header(3, 2, 0).tensor("a", {16}, kF32, 0).tensor("b", {8}, kF32, 32).pad(32).zeros(64);
  EXPECT_ERROR(overlap.take(), "tensor 1 'b': data [32, 64) overlaps tensor 0 'a' [0, 64)");
  GgufBytes same;
  same.header(3, 2, 0).tensor("a", {8}, kF32, 0).tensor("b", {8}, kF32, 0).pad(32).zeros(64);
  EXPECT_ERROR(same.take(), "overlaps");
  GgufBytes no_data;
  no_data.header(3, 1, 0).tensor("w", {8}, kF32, 0);
  EXPECT_ERROR(no_data.take(), "beyond end of file");
}

// A small but complete file from the writer, cut short at every byte: each prefix fails cleanly
// and says where.
TEST(Corrupt, TruncatedAtEveryByte) {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.context_length", 128);
  const std::vector<std::string> tokens = {"<s>", "a", "b"};
  w.set_array_str("tokenizer.ggml.tokens", tokens);
  Value nested;
  nested.type = ValueType::kArray;
  nested.elem_type = ValueType::kArray;
  nested.items.resize(2);
  for (Value& inner : nested.items) {
    inner.type = ValueType::kArray;
    inner.elem_type = ValueType::kI16;
    inner.items.resize(2);
    for (Value& x : inner.items) x.type = ValueType::kI16;
  }
  w.set_value("nested", nested);
  const std::vector<uint8_t> a(64, 1), b(18, 2);
  ASSERT_TRUE(w.add_tensor("a", DType::kF32, {4, 4}, a).is_ok());
  ASSERT_TRUE(w.add_tensor("b", DType::kQ4_0, {32}, b).is_ok());
  auto full = w.write_buffer();
  ASSERT_TRUE(full.ok());
  auto parsed = File::parse(*full);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const uint64_t data_offset = (*parsed)->data_offset();
  const uint64_t last_end = data_offset + (*parsed)->tensors()[1].offset + b.size();
  for (size_t n = 0; n < full->size(); ++n) {
    const std::vector<uint8_t> cut(full->begin(), full->begin() + static_cast<ptrdiff_t>(n));
    if (n >= last_end) {
      EXPECT_TRUE(File::parse(cut).ok()) << "only padding was cut at " << n;
      continue;
    }
    const std::string msg = error_of(cut);
    if (n < data_offset) {
      EXPECT_TRUE(msg.find("at byte") != std::string::npos) << n << ": " << msg;
    } else {
      EXPECT_TRUE(msg.find("beyond end of file") != std::string::npos) << n << ": " << msg;
    }
  }
}

TEST(Corrupt, UnsupportedTypesStillParse) {
  GgufBytes b;
  b.header(3, 2, 0).tensor("iq", {256}, 16, 0).tensor("i32", {4}, 26, 96).pad(32).zeros(128);
  const auto bytes = b.take();
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ((*f)->tensors()[0].type, DType::kIQ2_XXS);
  EXPECT_FALSE(dtype_info((*f)->tensors()[0].type).supported);
  const ModelSummary s = summarize(**f);
  EXPECT_EQ(s.parameters, 260u);
  EXPECT_EQ(s.quantization, "IQ2_XXS");
}

}  // namespace
}  // namespace paddock::gguf
