// GGUF v3 writer: metadata (every value type, arrays of arrays included) and tensors, laid out
// like llama.cpp does (tensor data in insertion order, each padded to the alignment). A file
// paddock wrote, read back and written again (copy_metadata + add_tensor_view for each tensor)
// gives identical bytes. Keys keep their insertion order; setting a key again replaces its value
// in place. Strings are copied into the writer; add_tensor copies the data, add_tensor_view
// only references it (the caller keeps it alive until the write).
//   Writer w; w.set_string("general.architecture", "llama"); w.set_u32("llama.block_count", 2);
//   PADDOCK_TRY(w.add_tensor("output.weight", DType::kF32, {64, 512}, bytes));
//   PADDOCK_TRY(w.write_file(path));
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace paddock::gguf {

class ByteSink;  // writer.cpp: a buffer or a FILE*

class Writer {
 public:
  Writer() = default;
  Writer(Writer&&) = default;  // string storage is a deque: moving it keeps the views valid
  Writer& operator=(Writer&&) = default;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  void set_array_str(std::string_view key, std::span<const std::string> v);
  void set_array_i32(std::string_view key, std::span<const int32_t> v);
  void set_array_f32(std::string_view key, std::span<const float> v);
  // Any value, nested arrays included; its strings are copied.
  void set_value(std::string_view key, const Value& v);
  // The data alignment, stored as general.alignment (u32); checked when writing.
  void set_alignment(uint32_t alignment) { set_u32("general.alignment", alignment); }
  bool remove(std::string_view key);
  // Every key-value of a parsed file, in its order (strings copied).
  void copy_metadata(const File& f);

  const std::vector<KeyValue>& metadata() const { return kv_; }
  const Value* find(std::string_view key) const;

  // Checks the name (nonempty, unique), the shape (1-4 dims, each > 0, ne[0] a multiple of the
  // block size) and that data holds exactly the tensor's bytes.
  Status add_tensor(std::string_view name, DType type, std::span<const int64_t> ne,
                    std::span<const uint8_t> data);
  Status add_tensor(std::string_view name, DType type, std::initializer_list<int64_t> ne,
                    std::span<const uint8_t> data) {
    return add_tensor(name, type, std::span<const int64_t>(ne.begin(), ne.size()), data);
  }
  Status add_tensor_view(std::string_view name, DType type, std::span<const int64_t> ne,
                         std::span<const uint8_t> data);
  size_t tensor_count() const { return tensors_.size(); }

  // Validates the metadata (keys nonempty and UTF-8, nesting depth, general.alignment) and
  // serialises the file.
  Result<std::vector<uint8_t>> write_buffer() const;
  // Writes to `path.tmp-<pid>` beside `path`, then renames it over `path`.
  Status write_file(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string_view name;
    DType type;
    std::vector<int64_t> ne;
    std::span<const uint8_t> data;  // into owned_data_ or the caller's bytes
  };

  std::string_view store(std::string_view s);
  Value copy_value(const Value& v);
  void set(std::string_view key, Value v);
  Status add(std::string_view name, DType type, std::span<const int64_t> ne, std::span<const uint8_t> data,
             bool copy);
  Status validate(uint64_t* alignment) const;
  Status emit(ByteSink& out) const;

  std::deque<std::string> strings_;
  std::deque<std::vector<uint8_t>> owned_data_;
  std::vector<KeyValue> kv_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace paddock::gguf
