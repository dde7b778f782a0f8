// The writer and the reader together: everything the writer can express reads back as written,
// and a file paddock wrote is reproduced byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/writer.h"

namespace paddock::gguf {
namespace {

std::vector<uint8_t> iota_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 1);
  return v;
}

Writer sample_writer(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u8("t.u8", 200);
  w.set_i8("t.i8", -100);
  w.set_u16("t.u16", 60000);
  w.set_i16("t.i16", -30000);
  w.set_u32("t.u32", 4000000000u);
  w.set_i32("t.i32", -2000000000);
  w.set_u64("t.u64", 18000000000000000000ull);
  w.set_i64("t.i64", -9000000000000000000ll);
  w.set_f32("t.f32", 0.1f);
  w.set_f64("t.f64", -2.5e300);
  w.set_bool("t.bool", true);
  const std::vector<std::string> tokens = {"a", "", "\xe2\x96\x81hello", std::string("\0x", 2)};
  w.set_array_str("tokenizer.ggml.tokens", tokens);
  const std::vector<int32_t> ints = {1, -2, 3};
  w.set_array_i32("t.ints", ints);
  const std::vector<float> floats = {0.5f, -1.0f};
  w.set_array_f32("t.floats", floats);
  Value nested;
  nested.type = ValueType::kArray;
  nested.elem_type = ValueType::kArray;
  for (int k = 0; k < 2; ++k) {
    Value inner;
    inner.type = ValueType::kArray;
    inner.elem_type = ValueType::kString;
    Value s;
    s.type = ValueType::kString;
    s.s = k == 0 ? "x" : "yz";
    inner.items.push_back(s);
    nested.items.push_back(inner);
  }
  w.set_value("t.nested", nested);
  EXPECT_TRUE(w.add_tensor("a", DType::kF32, {4, 3}, a).is_ok());
  EXPECT_TRUE(w.add_tensor("b", DType::kQ4_0, {64}, b).is_ok());
  return w;
}

TEST(Writer, WritesWhatTheReaderReadsBack) {
  const auto a = iota_bytes(48), b = iota_bytes(36);
  const Writer w = sample_writer(a, b);
  auto buf = w.write_buffer();
  ASSERT_TRUE(buf.ok()) << buf.status().message();
  auto f = File::parse(*buf);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const File& file = **f;
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.alignment(), kDefaultAlignment);
  EXPECT_EQ(file.data_offset() % 32, 0u);
  EXPECT_EQ(file.get_string("general.architecture"), "llama");
  EXPECT_EQ(file.get_int("t.u8"), 200);
  EXPECT_EQ(file.get_int("t.i8"), -100);
  EXPECT_EQ(file.get_int("t.u16"), 60000);
  EXPECT_EQ(file.get_int("t.i16"), -30000);
  EXPECT_EQ(file.get_int("t.u32"), 4000000000ll);
  EXPECT_EQ(file.get_int("t.i32"), -2000000000);
  EXPECT_EQ(file.get_int("t.u64"), std::nullopt);  // does not fit in int64
  EXPECT_EQ(file.find("t.u64")->as_u64(), 18000000000000000000ull);
  EXPECT_EQ(file.get_int("t.i64"), -9000000000000000000ll);
  EXPECT_EQ(file.find("t.i64")->as_u64(), std::nullopt);
  EXPECT_EQ(file.get_float("t.f32"), static_cast<double>(0.1f));
  EXPECT_EQ(file.get_float("t.f64"), -2.5e300);
  EXPECT_EQ(file.get_float("t.i32"), -2000000000.0);
  EXPECT_EQ(file.get_bool("t.bool"), true);
  EXPECT_EQ(file.get_bool("t.u8"), std::nullopt);
  EXPECT_EQ(file.get_string("t.u8"), std::nullopt);
  EXPECT_EQ(file.get_int("general.architecture"), std::nullopt);
  EXPECT_EQ(file.get_array("general.architecture"), nullptr);
  EXPECT_EQ(file.find("missing"), nullptr);

  const Value* tokens = file.get_array("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  ASSERT_EQ(tokens->items.size(), 4u);
  EXPECT_EQ(tokens->elem_type, ValueType::kString);
  EXPECT_EQ(tokens->items[2].s, "\xe2\x96\x81hello");
  EXPECT_EQ(tokens->items[3].s, std::string_view("\0x", 2));
  const Value* ints = file.get_array("t.ints");
  ASSERT_NE(ints, nullptr);
  EXPECT_EQ(ints->items[1].as_i64(), -2);
  const Value* nested = file.get_array("t.nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->items.size(), 2u);
  EXPECT_EQ(nested->items[1].elem_type, ValueType::kString);
  EXPECT_EQ(nested->items[1].items[0].s, "yz");

  ASSERT_EQ(file.tensors().size(), 2u);
  const TensorInfo* ta = file.find_tensor("a");
  ASSERT_NE(ta, nullptr);
  EXPECT_EQ(ta->ne, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(ta->n_elements, 12u);
  EXPECT_EQ(ta->n_bytes, 48u);
  const auto da = file.tensor_data(*ta);
  EXPECT_EQ(std::vector<uint8_t>(da.begin(), da.end()), a);
  const TensorInfo* tb = file.find_tensor("b");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(tb->type, DType::kQ4_0);
  EXPECT_EQ(tb->offset % 32, 0u);
  const auto db = file.tensor_data(*tb);
  EXPECT_EQ(std::vector<uint8_t>(db.begin(), db.end()), b);
  EXPECT_EQ(file.find_tensor("c"), nullptr);
}

// Copies a parsed file into a new writer: metadata and every tensor (as views).
Writer copy_of(const File& f) {
  Writer w;
  w.copy_metadata(f);
  for (const TensorInfo& t : f.tensors()) {
    EXPECT_TRUE(w.add_tensor_view(t.name, t.type, t.ne, f.tensor_data(t)).is_ok());
  }
  return w;
}

TEST(Writer, ReadThenWriteGivesIdenticalBytes) {
  const auto a = iota_bytes(48), b = iota_bytes(36);
  for (const uint32_t alignment : {32u, 1u, 64u, 4096u}) {
    Writer w = sample_writer(a, b);
    w.set_alignment(alignment);
    auto first = w.write_buffer();
    ASSERT_TRUE(first.ok()) << first.status().message();
    auto parsed = File::parse(*first);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ((*parsed)->alignment(), alignment);
    auto second = copy_of(**parsed).write_buffer();
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(*first, *second) << "alignment " << alignment;
  }
}

TEST(Writer, WriteFileRenamesIntoPlaceAndOpens) {
  const auto a = iota_bytes(48), b = iota_bytes(36);
  const Writer w = sample_writer(a, b);
  const auto dir = std::filesystem::temp_directory_path() / ("paddock_gguf_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.gguf").string();
  ASSERT_TRUE(w.write_file(path).is_ok());
  auto f = File::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ((*f)->tensors().size(), 2u);
  auto buf = w.write_buffer();
  ASSERT_TRUE(buf.ok());
  const auto bytes = (*f)->bytes();
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.end()), *buf);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1) << "temp file left behind";
  EXPECT_FALSE(w.write_file((dir / "no/such/dir/m.gguf").string()).is_ok());
  std::filesystem::remove_all(dir);
}

TEST(Writer, SettingAKeyAgainReplacesItInPlace) {
  Writer w;
  w.set_u32("a", 1);
  w.set_string("b", "x");
  w.set_string("a", "y");
  ASSERT_EQ(w.metadata().size(), 2u);
  EXPECT_EQ(w.metadata()[0].key, "a");
  EXPECT_EQ(w.metadata()[0].value.s, "y");
  EXPECT_TRUE(w.remove("b"));
  EXPECT_FALSE(w.remove("b"));
  EXPECT_EQ(w.metadata().size(), 1u);
}

TEST(Writer, RejectsWhatTheReaderWouldReject) {
  Writer w;
  const std::vector<uint8_t> four(4), sixteen(16);
  EXPECT_NE(w.add_tensor("", DType::kF32, {1}, four).message().find("empty"), std::string::npos);
  EXPECT_NE(w.add_tensor("t", DType::kF32, {2}, four).message().find("expected 8 bytes"), std::string::npos);
  EXPECT_NE(w.add_tensor("t", DType::kF32, {0}, four).message().find("> 0"), std::string::npos);
  EXPECT_NE(w.add_tensor("t", DType::kF32, {1, 1, 1, 1, 1}, four).message().find("1 to 4 dims"),
            std::string::npos);
  EXPECT_NE(w.add_tensor("t", DType::kQ4_0, {16}, four).message().find("block size"), std::string::npos);
  ASSERT_TRUE(w.add_tensor("t", DType::kF32, {4}, sixteen).is_ok());
  EXPECT_NE(w.add_tensor("t", DType::kF32, {4}, sixteen).message().find("duplicate"), std::string::npos);

  w.set_u64("general.alignment", 32);
  EXPECT_NE(w.write_buffer().status().message().find("general.alignment"), std::string::npos);
  w.set_u32("general.alignment", 24);
  EXPECT_NE(w.write_buffer().status().message().find("power of two"), std::string::npos);
  w.set_alignment(16);
  EXPECT_TRUE(w.write_buffer().ok());
  w.set_u8("", 1);
  EXPECT_NE(w.write_buffer().status().message().find("empty"), std::string::npos);
  w.remove("");
  w.set_u8("\xff", 1);
  EXPECT_NE(w.write_buffer().status().message().find("UTF-8"), std::string::npos);
  w.remove("\xff");
  Value mixed;
  mixed.type = ValueType::kArray;
  mixed.elem_type = ValueType::kU8;
  mixed.items.resize(1);
  mixed.items[0].type = ValueType::kI8;
  w.set_value("mixed", mixed);
  EXPECT_NE(w.write_buffer().status().message().find("holds an item of type i8"), std::string::npos);
}

TEST(Writer, MovedWriterKeepsItsStrings) {
  Writer w;
  w.set_string("k", "a short string kept in the small-string buffer");
  w.set_string("s", "x");
  Writer moved = std::move(w);
  auto buf = moved.write_buffer();
  ASSERT_TRUE(buf.ok());
  auto f = File::parse(*buf);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->get_string("s"), "x");
  EXPECT_EQ((*f)->get_string("k"), "a short string kept in the small-string buffer");
}

}  // namespace
}  // namespace paddock::gguf
