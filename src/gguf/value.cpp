#include <limits>

#include "gguf/gguf.h"

namespace paddock::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kU8: return "u8";
    case ValueType::kI8: return "i8";
    case ValueType::kU16: return "u16";
    case ValueType::kI16: return "i16";
    case ValueType::kU32: return "u32";
    case ValueType::kI32: return "i32";
    case ValueType::kF32: return "f32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kU64: return "u64";
    case ValueType::kI64: return "i64";
    case ValueType::kF64: return "f64";
  }
  return "unknown";
}

namespace {
bool is_unsigned(ValueType t) {
  return t == ValueType::kU8 || t == ValueType::kU16 || t == ValueType::kU32 || t == ValueType::kU64;
}
bool is_signed(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 || t == ValueType::kI64;
}
}  // namespace

bool Value::is_integer() const { return is_unsigned(type) || is_signed(type); }

std::optional<int64_t> Value::as_i64() const {
  if (is_signed(type)) return i;
  if (is_unsigned(type) && u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(u);
  }
  return std::nullopt;
}

std::optional<uint64_t> Value::as_u64() const {
  if (is_unsigned(type)) return u;
  if (is_signed(type) && i >= 0) return static_cast<uint64_t>(i);
  return std::nullopt;
}

std::optional<double> Value::as_f64() const {
  if (type == ValueType::kF32 || type == ValueType::kF64) return f;
  if (is_unsigned(type)) return static_cast<double>(u);
  if (is_signed(type)) return static_cast<double>(i);
  return std::nullopt;
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    constexpr uint32_t kMinForLength[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

uint64_t scalar_bytes(ValueType t) {
  switch (t) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool: return 1;
    case ValueType::kU16:
    case ValueType::kI16: return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32: return 4;
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64: return 8;
    case ValueType::kString:
    case ValueType::kArray: return 0;
  }
  return 0;
}

std::string token_text(const File& f, std::string_view id_key) {
  const Value* tokens = f.get_array("tokenizer.ggml.tokens");
  const auto id = f.get_int(id_key);
  if (!tokens || !id || *id < 0 || static_cast<uint64_t>(*id) >= tokens->items.size()) return "";
  return std::string(tokens->items[static_cast<size_t>(*id)].s);
}

}  // namespace paddock::gguf
