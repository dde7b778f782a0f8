// Test helper: builds GGUF bytes field by field, so tests can write exactly the corruption they
// want (a wrong count, a bad type id) at a known place. Little-endian, like the format.
//   auto b = GgufBytes().header(3, 1, 0).tensor("t", {32}, 0, 0).pad(32).zeros(128).take();
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace paddock::gguf::testing {

class GgufBytes {
 public:
  GgufBytes& u8(uint8_t v) { return raw(&v, 1); }
  GgufBytes& u32(uint32_t v) { return raw(&v, 4); }
  GgufBytes& u64(uint64_t v) { return raw(&v, 8); }
  GgufBytes& str(std::string_view s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  GgufBytes& raw(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
    return *this;
  }
  GgufBytes& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  // A key with a u32 value (type 4).
  GgufBytes& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(4).u32(v); }
  GgufBytes& tensor(std::string_view name, std::initializer_list<uint64_t> ne, uint32_t type,
                    uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (const uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  GgufBytes& pad(size_t align) {
    while (b_.size() % align) b_.push_back(0);
    return *this;
  }
  GgufBytes& zeros(size_t n) {
    b_.resize(b_.size() + n, 0);
    return *this;
  }
  size_t size() const { return b_.size(); }
  std::vector<uint8_t> take() { return std::move(b_); }

 private:
  std::vector<uint8_t> b_;
};

}  // namespace paddock::gguf::testing
