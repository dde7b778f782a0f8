// The CPU backend's interleaved copies (repack.h) of the weight matrices inside adopted bytes
// (Backend::adopt_weight_file). A matrix is repacked when the model loader binds it
// (Backend::prepare_weight), or else the first time it is multiplied, by every pool thread;
// when the adopted bytes are a file mapping, the original pages are then dropped, so resident
// memory stays about one copy of the weights.
// Invariants: only matrices wholly inside adopted bytes are repacked (their bytes never change,
// so a copy keyed by address stays valid for the backend's lifetime); one op at a time.
//   RepackedWeights rw;
//   rw.adopt(file_bytes, true);
//   const uint8_t* packed = rw.find_or_build(pool, w);  // nullptr: use w as it is
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "base/threadpool.h"

namespace paddock::cpu {

class RepackedWeights {
 public:
  void adopt(std::span<const uint8_t> bytes, bool release_pages);
  // The interleaved copy of w; nullptr when w is not inside adopted bytes, is not a plain 2-D
  // matrix of a type with an interleaved layout, or its rows are not a multiple of 8.
  const uint8_t* find_or_build(ThreadPool& pool, const TensorView& w);

 private:
  struct Region {
    const uint8_t* begin;
    const uint8_t* end;
    bool release_pages;
  };
  struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
  };

  std::vector<Region> regions_;
  std::unordered_map<const void*, std::unique_ptr<uint8_t, FreeDeleter>> copies_;
};

}  // namespace paddock::cpu
