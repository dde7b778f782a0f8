// The GGUF parser. Every read goes through Cursor, which checks the bytes that remain; every
// count is checked against those bytes (times the smallest encoding of one item) before
// anything is reserved, so a file cannot make us allocate more than its own size justifies.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_set>

#include "base/checked_math.h"
#include "gguf/gguf.h"
#include "gguf/layouts.h"

namespace paddock::gguf {

namespace {

using std::to_string;

std::string quoted(std::string_view s) {
  std::string r(1, '\'');
  r.append(s);
  r.push_back('\'');
  return r;
}

// Smallest number of bytes one value of this type takes in a file (arrays: type + count).
uint64_t min_encoded_size(ValueType t) {
  if (t == ValueType::kString) return 8;
  if (t == ValueType::kArray) return 12;
  return std::max<uint64_t>(scalar_bytes(t), 1);
}

bool valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::kF64); }

class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> b) : b_(b) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return b_.size() - pos_; }

  Status fail(uint64_t at, const std::string& what) const {
    return corrupt(what + " at byte " + to_string(at));
  }

  template <typename T>
  Status read(const std::string& field, T* out) {
    if (remaining() < sizeof(T)) {
      return fail(pos_, field + ": needs " + to_string(sizeof(T)) + " bytes, file ends after " +
                            to_string(remaining()));
    }
    std::memcpy(out, b_.data() + pos_, sizeof(T));  // GGUF is little-endian, as are our hosts
    pos_ += sizeof(T);
    return Status::ok();
  }

  Status read_string(const std::string& field, std::string_view* out) {
    const uint64_t at = pos_;
    uint64_t len;
    PADDOCK_TRY(read(field + " length", &len));
    if (len > remaining()) {
      return fail(at, field + ": string length " + to_string(len) + " exceeds the " + to_string(remaining()) +
                          " bytes left in the file");
    }
    *out = std::string_view(reinterpret_cast<const char*>(b_.data() + pos_), len);
    pos_ += len;
    return Status::ok();
  }

 private:
  std::span<const uint8_t> b_;
  uint64_t pos_ = 0;
};

template <typename Raw>
Status read_scalar(Cursor& c, const std::string& field, Value* v) {
  Raw raw;
  PADDOCK_TRY(c.read(field, &raw));
  if constexpr (std::is_floating_point_v<Raw>) {
    v->f = raw;
  } else if constexpr (std::is_signed_v<Raw>) {
    v->i = raw;
  } else {
    v->u = raw;
  }
  return Status::ok();
}

Status read_value(Cursor& c, ValueType type, const std::string& field, uint32_t depth, Value* v) {
  v->type = type;
  const uint64_t at = c.pos();
  switch (type) {
    case ValueType::kU8: return read_scalar<uint8_t>(c, field, v);
    case ValueType::kI8: return read_scalar<int8_t>(c, field, v);
    case ValueType::kU16: return read_scalar<uint16_t>(c, field, v);
    case ValueType::kI16: return read_scalar<int16_t>(c, field, v);
    case ValueType::kU32: return read_scalar<uint32_t>(c, field, v);
    case ValueType::kI32: return read_scalar<int32_t>(c, field, v);
    case ValueType::kU64: return read_scalar<uint64_t>(c, field, v);
    case ValueType::kI64: return read_scalar<int64_t>(c, field, v);
    case ValueType::kF32: return read_scalar<float>(c, field, v);
    case ValueType::kF64: return read_scalar<double>(c, field, v);
    case ValueType::kBool: {
      PADDOCK_TRY(read_scalar<uint8_t>(c, field, v));
      if (v->u > 1) return c.fail(at, field + ": bool must be 0 or 1, found " + to_string(v->u));
      return Status::ok();
    }
    case ValueType::kString: return c.read_string(field, &v->s);
    case ValueType::kArray: {
      if (depth >= kMaxArrayDepth) {
        return c.fail(at, field + ": arrays nested deeper than " + to_string(kMaxArrayDepth) + " levels");
      }
      uint32_t elem;
      PADDOCK_TRY(c.read(field + " array type", &elem));
      if (!valid_value_type(elem)) {
        return c.fail(at, field + ": unknown array element type " + to_string(elem));
      }
      v->elem_type = static_cast<ValueType>(elem);
      const uint64_t count_at = c.pos();
      uint64_t count;
      PADDOCK_TRY(c.read(field + " array count", &count));
      uint64_t need;
      const bool fits = checked_mul(count, min_encoded_size(v->elem_type), &need);
      if (!fits || need > c.remaining()) {
        return c.fail(count_at, field + ": array of " + to_string(count) + " " +
                                    std::string(value_type_name(v->elem_type)) + " needs at least " +
                                    (fits ? to_string(need) : std::string("2^64")) + " bytes, " +
                                    to_string(c.remaining()) + " left");
      }
      v->items.resize(count);
      for (uint64_t k = 0; k < count; ++k) {
        // Items share the array's field name: the byte offset in an error says which item it was.
        PADDOCK_TRY(read_value(c, v->elem_type, field, depth + 1, &v->items[k]));
      }
      return Status::ok();
    }
  }
  return c.fail(at, field + ": unknown value type");
}

Status check_alignment(const Value& v, uint64_t* out) {
  if (v.type != ValueType::kU32) {
    return corrupt("general.alignment: expected type u32, found " + std::string(value_type_name(v.type)));
  }
  if (v.u == 0 || (v.u & (v.u - 1)) != 0) {
    return corrupt("general.alignment: expected a nonzero power of two, found " + to_string(v.u));
  }
  *out = v.u;
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<File>> File::open(const std::string& path, Layout layout) {
  PADDOCK_ASSIGN(MappedFile m, MappedFile::open(path));
  std::unique_ptr<File> f(new File());
  f->mapping_ = std::move(m);
  f->bytes_ = f->mapping_.bytes();
  PADDOCK_TRY(f->parse_all().with_context(path));
  PADDOCK_TRY(f->finish(layout).with_context(path));
  return f;
}

Result<std::unique_ptr<File>> File::parse(std::span<const uint8_t> bytes, Layout layout) {
  std::unique_ptr<File> f(new File());
  f->bytes_ = bytes;
  PADDOCK_TRY(f->parse_all());
  PADDOCK_TRY(f->finish(layout));
  return f;
}

Status File::finish(Layout layout) {
  if (layout == Layout::kAsStored) return Status::ok();
  return translate_layout(*this);
}

Status File::parse_all() {
  Cursor c(bytes_);
  uint32_t magic;
  PADDOCK_TRY(c.read("magic", &magic));
  if (magic != kMagic) {
    return c.fail(
        0, "not a GGUF file: expected magic 'GGUF' (0x46554747), found 0x" + [&] {
          char buf[16];
          std::snprintf(buf, sizeof buf, "%08x", magic);
          return std::string(buf);
        }());
  }
  PADDOCK_TRY(c.read("version", &version_));
  if (version_ == 1) return c.fail(4, "GGUF version 1 is not supported (expected version 2 or 3)");
  if (version_ != 2 && version_ != 3) {
    const uint32_t swapped = __builtin_bswap32(version_);
    if (swapped >= 1 && swapped <= 3) {
      return c.fail(4, "big-endian GGUF (version " + to_string(swapped) +
                           " byte-swapped) is not supported; convert it to little-endian");
    }
    return c.fail(4, "unsupported GGUF version " + to_string(version_) + " (expected 2 or 3)");
  }
  uint64_t n_tensors, n_kv;
  PADDOCK_TRY(c.read("tensor count", &n_tensors));
  PADDOCK_TRY(c.read("metadata count", &n_kv));
  // A key-value takes at least 8 (key length) + 1 (key) + 4 (type) + 1 (value) bytes; a tensor info
  // at least 8 + 1 (name) + 4 (n_dims) + 8 (one dim) + 4 (type) + 8 (offset).
  constexpr uint64_t kMinKv = 14, kMinTensorInfo = 33;
  uint64_t kv_bytes, ti_bytes, need;
  if (!checked_mul(n_kv, kMinKv, &kv_bytes) || !checked_mul(n_tensors, kMinTensorInfo, &ti_bytes) ||
      !checked_add(kv_bytes, ti_bytes, &need) || need > c.remaining()) {
    return c.fail(8, to_string(n_tensors) + " tensors and " + to_string(n_kv) +
                         " metadata entries cannot fit in the " + to_string(c.remaining()) +
                         " bytes after the header");
  }

  kv_.resize(n_kv);
  key_index_.reserve(n_kv);
  for (uint64_t k = 0; k < n_kv; ++k) {
    const uint64_t at = c.pos();
    const std::string field = "metadata entry " + to_string(k);
    KeyValue& kv = kv_[k];
    PADDOCK_TRY(c.read_string(field + " key", &kv.key));
    if (kv.key.empty()) return c.fail(at, field + ": empty key");
    if (!is_valid_utf8(kv.key)) return c.fail(at, field + ": key is not valid UTF-8");
    if (!key_index_.emplace(kv.key, k).second) return c.fail(at, field + ": duplicate key " + quoted(kv.key));
    const uint64_t type_at = c.pos();
    uint32_t type;
    PADDOCK_TRY(c.read(field + " " + quoted(kv.key) + " type", &type));
    if (!valid_value_type(type)) {
      return c.fail(type_at, "key " + quoted(kv.key) + ": unknown value type " + to_string(type));
    }
    PADDOCK_TRY(read_value(c, static_cast<ValueType>(type), "key " + quoted(kv.key), 0, &kv.value));
  }
  if (const Value* a = find("general.alignment")) PADDOCK_TRY(check_alignment(*a, &alignment_));

  tensors_.resize(n_tensors);
  tensor_index_.reserve(n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    const uint64_t at = c.pos();
    TensorInfo& t = tensors_[k];
    std::string field = "tensor " + to_string(k);
    PADDOCK_TRY(c.read_string(field + " name", &t.name));
    if (t.name.empty()) return c.fail(at, field + ": empty name");
    if (!is_valid_utf8(t.name)) return c.fail(at, field + ": name is not valid UTF-8");
    field += " " + quoted(t.name);
    if (!tensor_index_.emplace(t.name, k).second) return c.fail(at, field + ": duplicate tensor name");
    const uint64_t dims_at = c.pos();
    uint32_t n_dims;
    PADDOCK_TRY(c.read(field + " n_dims", &n_dims));
    if (n_dims < 1 || n_dims > kMaxDims) {
      return c.fail(dims_at,
                    field + ": n_dims must be 1 to " + to_string(kMaxDims) + ", found " + to_string(n_dims));
    }
    t.ne.resize(n_dims);
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_at = c.pos();
      uint64_t ne;
      PADDOCK_TRY(c.read(field + " ne[" + to_string(d) + "]", &ne));
      if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return c.fail(dim_at,
                      field + ": ne[" + to_string(d) + "] must be in [1, 2^63), found " + to_string(ne));
      }
      if (!checked_mul(n_elements, ne, &n_elements) ||
          n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return c.fail(dim_at, field + ": element count overflows 63 bits");
      }
      t.ne[d] = static_cast<int64_t>(ne);
    }
    t.n_elements = n_elements;
    const uint64_t type_at = c.pos();
    uint32_t type_id;
    PADDOCK_TRY(c.read(field + " type", &type_id));
    const std::optional<DType> type = dtype_from_id(type_id);
    if (!type) return c.fail(type_at, field + ": unknown tensor type id " + to_string(type_id));
    t.type = *type;
    const DTypeInfo& info = dtype_info(t.type);
    if (static_cast<uint64_t>(t.ne[0]) % info.block_size != 0) {
      return c.fail(dims_at, field + ": ne[0] = " + to_string(t.ne[0]) + " is not a multiple of the " +
                                 std::string(info.name) + " block size " + to_string(info.block_size));
    }
    if (!checked_mul(n_elements / info.block_size, uint64_t{info.type_size}, &t.n_bytes)) {
      return c.fail(dims_at, field + ": byte size overflows 64 bits");
    }
    const uint64_t offset_at = c.pos();
    PADDOCK_TRY(c.read(field + " offset", &t.offset));
    if (t.offset % alignment_ != 0) {
      return c.fail(offset_at, field + ": data offset " + to_string(t.offset) +
                                   " is not a multiple of the alignment " + to_string(alignment_));
    }
  }

  if (!checked_align_up(c.pos(), alignment_, &data_offset_)) {
    return c.fail(c.pos(), "data section offset overflows when aligned to " + to_string(alignment_));
  }
  if (tensors_.empty()) return Status::ok();
  const uint64_t file_size = bytes_.size();
  if (data_offset_ > file_size) {
    return c.fail(c.pos(), "data section starts at " + to_string(data_offset_) + ", beyond end of file (" +
                               to_string(file_size) + " bytes)");
  }
  const uint64_t data_size = file_size - data_offset_;
  for (size_t k = 0; k < tensors_.size(); ++k) {
    const TensorInfo& t = tensors_[k];
    uint64_t end;
    if (!checked_add(t.offset, t.n_bytes, &end) || end > data_size) {
      const bool wraps = !checked_add(t.offset, t.n_bytes, &end);
      return corrupt("tensor " + to_string(k) + " " + quoted(t.name) + ": data [" + to_string(t.offset) +
                     ", " + (wraps ? std::string("2^64+") : to_string(end)) +
                     ") of the data section at byte " + to_string(data_offset_) + " beyond end of file (" +
                     to_string(file_size) + " bytes)");
    }
  }
  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = tensors_[order[k - 1]];
    const TensorInfo& cur = tensors_[order[k]];
    if (prev.offset + prev.n_bytes > cur.offset) {
      return corrupt("tensor " + to_string(order[k]) + " " + quoted(cur.name) + ": data [" +
                     to_string(cur.offset) + ", " + to_string(cur.offset + cur.n_bytes) +
                     ") overlaps tensor " + to_string(order[k - 1]) + " " + quoted(prev.name) + " [" +
                     to_string(prev.offset) + ", " + to_string(prev.offset + prev.n_bytes) + ")");
    }
  }
  return Status::ok();
}

const Value* File::find(std::string_view key) const {
  const auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &kv_[it->second].value;
}

std::optional<std::string_view> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v || v->type != ValueType::kString) return std::nullopt;
  return v->s;
}

std::optional<int64_t> File::get_int(std::string_view key) const {
  const Value* v = find(key);
  return v ? v->as_i64() : std::nullopt;
}

std::optional<double> File::get_float(std::string_view key) const {
  const Value* v = find(key);
  return v ? v->as_f64() : std::nullopt;
}

std::optional<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (!v || v->type != ValueType::kBool) return std::nullopt;
  return v->u != 0;
}

const Value* File::get_array(std::string_view key) const {
  const Value* v = find(key);
  return v && v->type == ValueType::kArray ? v : nullptr;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> File::tensor_data(const TensorInfo& t) const {
  return bytes_.subspan(data_offset_ + t.offset, t.n_bytes);
}

}  // namespace paddock::gguf
