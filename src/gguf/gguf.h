// GGUF reader (versions 2 and 3) over a byte span, usually an mmap'd file. Every count,
// length, offset and size is checked against the bytes that remain before anything is
// allocated or read, with overflow-checked arithmetic; errors name the field and byte offset.
// A File is immutable after parsing; strings and tensor data point into the bytes, which
// must outlive it (File::open keeps its own mapping).
//   PADDOCK_ASSIGN(auto f, gguf::File::open(path));
//   auto arch = f->get_string("general.architecture");
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"
#include "tensor/dtype.h"

namespace paddock::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxDims = 4;
// Arrays of arrays deeper than this are rejected: real files use at most 2 levels, and the
// parser recurses once per level.
inline constexpr uint32_t kMaxArrayDepth = 8;

// clang-format off
enum class ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
// clang-format on
std::string_view value_type_name(ValueType t);
// Bytes of a scalar value in a file (1, 2, 4 or 8); 0 for strings and arrays.
uint64_t scalar_bytes(ValueType t);

// One metadata value. Scalars keep their GGUF type; integers are readable through as_i64 /
// as_u64 when they fit. Arrays hold their element type and items (arrays of arrays allowed).
struct Value {
  ValueType type = ValueType::kU8;
  uint64_t u = 0;                        // unsigned ints and bool
  int64_t i = 0;                         // signed ints
  double f = 0;                          // f32/f64
  std::string_view s;                    // kString: points into the file's bytes
  ValueType elem_type = ValueType::kU8;  // kArray
  std::vector<Value> items;              // kArray

  bool is_integer() const;
  std::optional<int64_t> as_i64() const;   // any integer type that fits
  std::optional<uint64_t> as_u64() const;  // any non-negative integer
  std::optional<double> as_f64() const;    // any integer or float
};

struct KeyValue {
  std::string_view key;
  Value value;
};

struct TensorInfo {
  std::string_view name;
  std::vector<int64_t> ne;  // ne[0] innermost; 1-4 dims, each > 0
  DType type;
  uint64_t offset;  // relative to the data section, aligned
  uint64_t n_elements;
  uint64_t n_bytes;
};

// What open/parse hand back: the file translated to llama.cpp's layout when it is one of
// the layouts Ollama published (gguf/layouts.h), or exactly as stored (`show`, as Ollama
// shows its own files).
enum class Layout : uint8_t { kLlamaCpp, kAsStored };

class LayoutEditor;

class File {
 public:
  // Maps and parses a file. The returned File owns the mapping.
  static Result<std::unique_ptr<File>> open(const std::string& path, Layout layout = Layout::kLlamaCpp);
  // Parses bytes the caller keeps alive (fuzzing, in-memory files).
  static Result<std::unique_ptr<File>> parse(std::span<const uint8_t> bytes, Layout layout = Layout::kLlamaCpp);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute start of the data section
  const std::vector<KeyValue>& metadata() const { return kv_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  const Value* find(std::string_view key) const;
  std::optional<std::string_view> get_string(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;   // any integer type
  std::optional<double> get_float(std::string_view key) const;  // any numeric type
  std::optional<bool> get_bool(std::string_view key) const;
  const Value* get_array(std::string_view key) const;  // nullptr if absent / not array

  const TensorInfo* find_tensor(std::string_view name) const;
  std::span<const uint8_t> tensor_data(const TensorInfo& t) const;
  std::span<const uint8_t> bytes() const { return bytes_; }
  // Whether bytes() is this File's own read-only mapping of a file (open), not caller memory.
  bool is_file_mapping() const { return mapping_.size() != 0; }
  // The translation applied (layouts.h), empty when the file is as stored.
  std::string_view translated_from() const { return translated_from_; }

 private:
  friend class LayoutEditor;
  File() = default;
  Status parse_all();
  Status finish(Layout layout);

  MappedFile mapping_;
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kv_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> key_index_;     // key -> index in kv_
  std::unordered_map<std::string_view, size_t> tensor_index_;  // name -> index in tensors_
  std::deque<std::string> owned_;  // keys, names and strings a translation wrote
  std::string_view translated_from_;
};

// Whether `s` is well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
bool is_valid_utf8(std::string_view s);

// The text of the token whose id metadata key `id_key` holds (e.g.
// "tokenizer.ggml.bos_token_id"); empty when the key or the token is missing.
std::string token_text(const File& f, std::string_view id_key);

}  // namespace paddock::gguf
