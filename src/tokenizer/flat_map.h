// Open-addressing hash tables for the tokenizer's hot lookups (token text -> id, merge pair
// -> rank): one probe sequence over a flat array instead of std::unordered_map's node chase.
// Built once at load, read-only afterwards (thread-safe reads).
//   TextIndex idx; idx.build(texts); int32_t id = idx.find("hello", texts);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paddock::tok {

inline uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w = 0;
    for (size_t k = 0; k < 8; ++k) w |= static_cast<uint64_t>(static_cast<uint8_t>(s[i + k])) << (8 * k);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  for (size_t k = 0; i + k < s.size(); ++k)
    w |= static_cast<uint64_t>(static_cast<uint8_t>(s[i + k])) << (8 * k);
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 29);
}

// Maps each distinct text of a vector to its first index.
class TextIndex {
 public:
  void build(const std::vector<std::string>& texts) {
    size_t cap = 16;
    while (cap < texts.size() * 2) cap *= 2;
    mask_ = cap - 1;
    slots_.assign(cap, Slot{0, -1});
    for (size_t i = 0; i < texts.size(); ++i) {
      if (find(texts[i], texts) >= 0) continue;
      const uint64_t h = hash_bytes(texts[i]);
      size_t p = h & mask_;
      while (slots_[p].id >= 0) p = (p + 1) & mask_;
      slots_[p] = {static_cast<uint32_t>(h >> 32), static_cast<int32_t>(i)};
    }
  }
  int32_t find(std::string_view s, const std::vector<std::string>& texts) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash_bytes(s);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t p = h & mask_;; p = (p + 1) & mask_) {
      const Slot& slot = slots_[p];
      if (slot.id < 0) return -1;
      if (slot.tag == tag && texts[static_cast<size_t>(slot.id)] == s) return slot.id;
    }
  }

 private:
  struct Slot {
    uint32_t tag;
    int32_t id;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// uint64 key -> int32 value; the first insert of a key wins.
class PairIndex {
 public:
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap *= 2;
    mask_ = cap - 1;
    slots_.assign(cap, Slot{0, -1});
  }
  void insert(uint64_t key, int32_t value) {
    for (size_t p = mix(key) & mask_;; p = (p + 1) & mask_) {
      if (slots_[p].value < 0) {
        slots_[p] = {key, value};
        return;
      }
      if (slots_[p].key == key) return;
    }
  }
  int32_t find(uint64_t key) const {
    if (slots_.empty()) return -1;
    for (size_t p = mix(key) & mask_;; p = (p + 1) & mask_) {
      if (slots_[p].value < 0) return -1;
      if (slots_[p].key == key) return slots_[p].value;
    }
  }

 private:
  static uint64_t mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDull;
    return k ^ (k >> 33);
  }
  struct Slot {
    uint64_t key;
    int32_t value;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace paddock::tok
