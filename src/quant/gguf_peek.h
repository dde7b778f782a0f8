// A minimal GGUF reader for the quant golden tests only: tensor names, types, shapes and data
// of a trusted fixture file. (quant/ may not use gguf/, and the real reader is not needed to
// pin block layouts.) Returns an empty map on any malformation.
//   auto tensors = read_gguf_tensors(bytes); tensors["blk.0.ffn_up.weight"].data
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace paddock::quant_test {

struct PeekTensor {
  uint32_t type = 0;
  std::vector<uint64_t> ne;
  const uint8_t* data = nullptr;
  uint64_t n_elements() const {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    return n;
  }
};

class GgufPeek {
 public:
  explicit GgufPeek(const std::vector<uint8_t>& bytes)
      : begin_(bytes.data()), p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  std::map<std::string, PeekTensor> tensors() {
    std::map<std::string, PeekTensor> out;
    uint32_t magic = 0;
    uint32_t version = 0;
    uint64_t n_tensors = 0;
    uint64_t n_kv = 0;
    if (!get(magic) || magic != 0x46554747u || !get(version) || version < 2 || !get(n_tensors) ||
        !get(n_kv)) {
      return {};
    }
    uint64_t alignment = 32;
    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key;
      uint32_t type = 0;
      if (!get_string(key) || !get(type)) return {};
      if (key == "general.alignment" && type == 4) {
        uint32_t a = 0;
        if (!get(a) || a == 0) return {};
        alignment = a;
      } else if (!skip_value(type)) {
        return {};
      }
    }
    std::vector<std::pair<std::string, uint64_t>> offsets;
    for (uint64_t i = 0; i < n_tensors; ++i) {
      std::string name;
      uint32_t n_dims = 0;
      PeekTensor t;
      uint64_t offset = 0;
      if (!get_string(name) || !get(n_dims) || n_dims > 4) return {};
      t.ne.resize(n_dims);
      for (uint64_t& d : t.ne) {
        if (!get(d)) return {};
      }
      if (!get(t.type) || !get(offset)) return {};
      out[name] = t;
      offsets.emplace_back(name, offset);
    }
    const auto header = static_cast<uint64_t>(p_ - begin_);
    const uint64_t data_start = (header + alignment - 1) / alignment * alignment;
    for (auto& [name, offset] : offsets) {
      if (data_start + offset > static_cast<uint64_t>(end_ - begin_)) return {};
      out[name].data = begin_ + data_start + offset;
    }
    return out;
  }

 private:
  template <typename T>
  bool get(T& v) {
    if (static_cast<size_t>(end_ - p_) < sizeof v) return false;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return true;
  }
  bool get_string(std::string& s) {
    uint64_t n = 0;
    if (!get(n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    s.assign(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  bool skip(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - p_)) return false;
    p_ += n;
    return true;
  }
  bool skip_value(uint32_t type) {
    static constexpr uint64_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type >= std::size(kSizes)) return false;
    if (type == 8) {
      std::string s;
      return get_string(s);
    }
    if (type == 9) {
      uint32_t item = 0;
      uint64_t n = 0;
      if (!get(item) || !get(n)) return false;
      for (uint64_t i = 0; i < n; ++i) {
        if (!skip_value(item)) return false;
      }
      return true;
    }
    return skip(kSizes[type]);
  }

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace paddock::quant_test
