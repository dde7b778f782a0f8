// The activation buffers of one forward pass. Buffers come from a process-wide pool of
// finished passes' buffers (best fit by size), because a fresh allocation of the tens of MB a
// prompt pass needs per layer costs page faults and the kernel's zeroing of every page
// (about a tenth of pp512 time before the pool). The pool keeps at most kPoolBytes idle.
// Invariants: a buffer's contents start undefined (every op writes its whole output); views
// stay valid until release_since drops their buffer or the Arena dies.
//   Arena arena;
//   TensorView x = arena.f32({n_embd, n_tokens});
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>

#include "backend/backend.h"

namespace paddock {

class Arena {
 public:
  static constexpr size_t kPoolBytes = size_t{128} << 20;

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  TensorView f32(std::initializer_list<int64_t> ne);
  // Frees every buffer allocated since `mark()` except the one `keep` points into, so a pass
  // holds one layer's intermediates at a time (a layer's output is all the next one needs).
  size_t mark() const { return bufs_.size(); }
  void release_since(size_t mark, const TensorView& keep);

  struct Buffer {
    std::unique_ptr<float[]> data;
    size_t capacity = 0;  // floats
  };

 private:
  std::deque<Buffer> bufs_;
};

}  // namespace paddock
