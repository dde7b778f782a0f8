#include "gguf/writer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/checked_math.h"

namespace paddock::gguf {

// Where serialised bytes go: a growing buffer or a FILE*.
class ByteSink {
 public:
  explicit ByteSink(std::vector<uint8_t>* buf) : buf_(buf) {}
  explicit ByteSink(std::FILE* f) : file_(f) {}
  uint64_t pos() const { return pos_; }
  bool failed() const { return failed_; }

  void bytes(const void* p, size_t n) {
    if (n == 0) return;
    if (buf_) {
      const auto* b = static_cast<const uint8_t*>(p);
      buf_->insert(buf_->end(), b, b + n);
    } else if (std::fwrite(p, 1, n, file_) != n) {
      failed_ = true;
    }
    pos_ += n;
  }
  template <typename T>
  void put(T v) {
    bytes(&v, sizeof v);  // little-endian hosts only, like the reader
  }
  void str(std::string_view s) {
    put<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static constexpr uint8_t kZeros[64] = {};
    while (pos_ % alignment != 0) {
      const uint64_t n = std::min<uint64_t>(sizeof kZeros, alignment - pos_ % alignment);
      bytes(kZeros, n);
    }
  }

 private:
  std::vector<uint8_t>* buf_ = nullptr;
  std::FILE* file_ = nullptr;
  uint64_t pos_ = 0;
  bool failed_ = false;
};

namespace {

void emit_payload(ByteSink& out, const Value& v) {
  switch (v.type) {
    case ValueType::kU8: out.put(static_cast<uint8_t>(v.u)); break;
    case ValueType::kI8: out.put(static_cast<int8_t>(v.i)); break;
    case ValueType::kU16: out.put(static_cast<uint16_t>(v.u)); break;
    case ValueType::kI16: out.put(static_cast<int16_t>(v.i)); break;
    case ValueType::kU32: out.put(static_cast<uint32_t>(v.u)); break;
    case ValueType::kI32: out.put(static_cast<int32_t>(v.i)); break;
    case ValueType::kU64: out.put(v.u); break;
    case ValueType::kI64: out.put(v.i); break;
    case ValueType::kF32: out.put(static_cast<float>(v.f)); break;
    case ValueType::kF64: out.put(v.f); break;
    case ValueType::kBool: out.put(static_cast<uint8_t>(v.u != 0)); break;
    case ValueType::kString: out.str(v.s); break;
    case ValueType::kArray:
      out.put(static_cast<uint32_t>(v.elem_type));
      out.put(static_cast<uint64_t>(v.items.size()));
      for (const Value& item : v.items) emit_payload(out, item);
      break;
  }
}

void emit_value(ByteSink& out, const Value& v) {
  out.put(static_cast<uint32_t>(v.type));
  emit_payload(out, v);
}

// Arrays must be homogeneous (every item of elem_type) and nested at most kMaxArrayDepth deep,
// or the reader would reject what we wrote.
Status check_value(const std::string& key, const Value& v, uint32_t depth) {
  if (v.type != ValueType::kArray) return Status::ok();
  if (depth >= kMaxArrayDepth) {
    return invalid_argument("key '" + key + "': arrays nested deeper than " + std::to_string(kMaxArrayDepth));
  }
  for (const Value& item : v.items) {
    if (item.type != v.elem_type) {
      return invalid_argument("key '" + key + "': array of " + std::string(value_type_name(v.elem_type)) +
                              " holds an item of type " + std::string(value_type_name(item.type)));
    }
    PADDOCK_TRY(check_value(key, item, depth + 1));
  }
  return Status::ok();
}

}  // namespace

std::string_view Writer::store(std::string_view s) { return strings_.emplace_back(s); }

Value Writer::copy_value(const Value& v) {
  Value out = v;
  if (v.type == ValueType::kString) out.s = store(v.s);
  for (size_t k = 0; k < v.items.size(); ++k) out.items[k] = copy_value(v.items[k]);
  return out;
}

void Writer::set(std::string_view key, Value v) {
  for (KeyValue& kv : kv_) {
    if (kv.key == key) {
      kv.value = std::move(v);
      return;
    }
  }
  kv_.push_back(KeyValue{store(key), std::move(v)});
}

namespace {
Value unsigned_value(ValueType t, uint64_t u) {
  Value v;
  v.type = t;
  v.u = u;
  return v;
}
Value signed_value(ValueType t, int64_t i) {
  Value v;
  v.type = t;
  v.i = i;
  return v;
}
Value float_value(ValueType t, double f) {
  Value v;
  v.type = t;
  v.f = f;
  return v;
}
Value array_value(ValueType elem) {
  Value v;
  v.type = ValueType::kArray;
  v.elem_type = elem;
  return v;
}
}  // namespace

void Writer::set_u8(std::string_view k, uint8_t v) { set(k, unsigned_value(ValueType::kU8, v)); }
void Writer::set_i8(std::string_view k, int8_t v) { set(k, signed_value(ValueType::kI8, v)); }
void Writer::set_u16(std::string_view k, uint16_t v) { set(k, unsigned_value(ValueType::kU16, v)); }
void Writer::set_i16(std::string_view k, int16_t v) { set(k, signed_value(ValueType::kI16, v)); }
void Writer::set_u32(std::string_view k, uint32_t v) { set(k, unsigned_value(ValueType::kU32, v)); }
void Writer::set_i32(std::string_view k, int32_t v) { set(k, signed_value(ValueType::kI32, v)); }
void Writer::set_u64(std::string_view k, uint64_t v) { set(k, unsigned_value(ValueType::kU64, v)); }
void Writer::set_i64(std::string_view k, int64_t v) { set(k, signed_value(ValueType::kI64, v)); }
void Writer::set_f32(std::string_view k, float v) { set(k, float_value(ValueType::kF32, v)); }
void Writer::set_f64(std::string_view k, double v) { set(k, float_value(ValueType::kF64, v)); }
void Writer::set_bool(std::string_view k, bool v) { set(k, unsigned_value(ValueType::kBool, v ? 1 : 0)); }

void Writer::set_string(std::string_view k, std::string_view s) {
  Value v;
  v.type = ValueType::kString;
  v.s = store(s);
  set(k, std::move(v));
}

void Writer::set_array_str(std::string_view k, std::span<const std::string> items) {
  Value v = array_value(ValueType::kString);
  v.items.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    v.items[i].type = ValueType::kString;
    v.items[i].s = store(items[i]);
  }
  set(k, std::move(v));
}

void Writer::set_array_i32(std::string_view k, std::span<const int32_t> items) {
  Value v = array_value(ValueType::kI32);
  v.items.reserve(items.size());
  for (const int32_t x : items) v.items.push_back(signed_value(ValueType::kI32, x));
  set(k, std::move(v));
}

void Writer::set_array_f32(std::string_view k, std::span<const float> items) {
  Value v = array_value(ValueType::kF32);
  v.items.reserve(items.size());
  for (const float x : items) v.items.push_back(float_value(ValueType::kF32, x));
  set(k, std::move(v));
}

void Writer::set_value(std::string_view k, const Value& v) { set(k, copy_value(v)); }

bool Writer::remove(std::string_view key) {
  for (auto it = kv_.begin(); it != kv_.end(); ++it) {
    if (it->key == key) {
      kv_.erase(it);
      return true;
    }
  }
  return false;
}

void Writer::copy_metadata(const File& f) {
  for (const KeyValue& kv : f.metadata()) set_value(kv.key, kv.value);
}

const Value* Writer::find(std::string_view key) const {
  for (const KeyValue& kv : kv_) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

Status Writer::add_tensor(std::string_view name, DType type, std::span<const int64_t> ne,
                          std::span<const uint8_t> data) {
  return add(name, type, ne, data, /*copy=*/true);
}

Status Writer::add_tensor_view(std::string_view name, DType type, std::span<const int64_t> ne,
                               std::span<const uint8_t> data) {
  return add(name, type, ne, data, /*copy=*/false);
}

Status Writer::add(std::string_view name, DType type, std::span<const int64_t> ne,
                   std::span<const uint8_t> data, bool copy) {
  const std::string what = "tensor '" + std::string(name) + "'";
  if (name.empty()) return invalid_argument("tensor name is empty");
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) return invalid_argument(what + ": duplicate tensor name");
  }
  if (ne.empty() || ne.size() > kMaxDims) {
    return invalid_argument(what + ": expected 1 to 4 dims, found " + std::to_string(ne.size()));
  }
  if (!dtype_from_id(static_cast<uint32_t>(type))) {
    return invalid_argument(what + ": invalid type id " + std::to_string(static_cast<uint32_t>(type)));
  }
  const DTypeInfo& info = dtype_info(type);
  uint64_t n = 1;
  for (const int64_t d : ne) {
    if (d <= 0) return invalid_argument(what + ": dims must be > 0, found " + std::to_string(d));
    if (!checked_mul(n, static_cast<uint64_t>(d), &n))
      return invalid_argument(what + ": element count overflows");
  }
  if (ne[0] % info.block_size != 0) {
    return invalid_argument(what + ": ne[0] = " + std::to_string(ne[0]) + " is not a multiple of the " +
                            std::string(info.name) + " block size " + std::to_string(info.block_size));
  }
  uint64_t n_bytes;
  if (!checked_mul(n / info.block_size, uint64_t{info.type_size}, &n_bytes)) {
    return invalid_argument(what + ": byte size overflows");
  }
  if (data.size() != n_bytes) {
    return invalid_argument(what + ": expected " + std::to_string(n_bytes) + " bytes of " +
                            std::string(info.name) + " data, found " + std::to_string(data.size()));
  }
  std::span<const uint8_t> kept = data;
  if (copy) kept = owned_data_.emplace_back(data.begin(), data.end());
  tensors_.push_back(PendingTensor{store(name), type, std::vector<int64_t>(ne.begin(), ne.end()), kept});
  return Status::ok();
}

Status Writer::validate(uint64_t* alignment) const {
  for (const KeyValue& kv : kv_) {
    if (kv.key.empty()) return invalid_argument("metadata key is empty");
    if (!is_valid_utf8(kv.key)) return invalid_argument("metadata key is not valid UTF-8");
    PADDOCK_TRY(check_value(std::string(kv.key), kv.value, 0));
  }
  *alignment = kDefaultAlignment;
  if (const Value* a = find("general.alignment")) {
    if (a->type != ValueType::kU32 || a->u == 0 || (a->u & (a->u - 1)) != 0) {
      return invalid_argument("general.alignment must be a u32 power of two");
    }
    *alignment = a->u;
  }
  return Status::ok();
}

Status Writer::emit(ByteSink& out) const {
  uint64_t alignment;
  PADDOCK_TRY(validate(&alignment));
  out.put(kMagic);
  out.put(uint32_t{3});
  out.put(static_cast<uint64_t>(tensors_.size()));
  out.put(static_cast<uint64_t>(kv_.size()));
  for (const KeyValue& kv : kv_) {
    out.str(kv.key);
    emit_value(out, kv.value);
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    out.str(t.name);
    out.put(static_cast<uint32_t>(t.ne.size()));
    for (const int64_t d : t.ne) out.put(static_cast<uint64_t>(d));
    out.put(static_cast<uint32_t>(t.type));
    out.put(offset);
    if (!checked_align_up(offset + t.data.size(), alignment, &offset))
      return invalid_argument("file too large");
  }
  out.pad_to(alignment);
  for (const PendingTensor& t : tensors_) {
    out.bytes(t.data.data(), t.data.size());
    out.pad_to(alignment);
  }
  return Status::ok();
}

Result<std::vector<uint8_t>> Writer::write_buffer() const {
  std::vector<uint8_t> buf;
  ByteSink out(&buf);
  PADDOCK_TRY(emit(out));
  return buf;
}

Status Writer::write_file(const std::string& path) const {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return io_error(tmp + ": " + std::strerror(errno));
  ByteSink out(f);
  Status st = emit(out);
  const bool write_failed = out.failed() || std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0;
  const int saved_errno = errno;
  const bool close_failed = std::fclose(f) != 0;
  if (st.is_ok() && (write_failed || close_failed)) {
    st = io_error(tmp + ": write failed: " + std::strerror(saved_errno));
  }
  if (st.is_ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    st = io_error(path + ": rename failed: " + std::strerror(errno));
  }
  if (!st.is_ok()) std::remove(tmp.c_str());
  return st;
}

}  // namespace paddock::gguf
