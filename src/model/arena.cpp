#include "model/arena.h"

#include <map>
#include <mutex>
#include <utility>

namespace paddock {

namespace {

class BufferPool {
 public:
  // The smallest idle buffer of at least n floats, or a new one of exactly n.
  Arena::Buffer take(size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = idle_.lower_bound(n);
      if (it != idle_.end()) {
        Arena::Buffer b{std::move(it->second), it->first};
        idle_bytes_ -= b.capacity * sizeof(float);
        idle_.erase(it);
        return b;
      }
    }
    return {std::unique_ptr<float[]>(new float[n]), n};
  }

  void give(Arena::Buffer b) {
    if (b.data == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    idle_bytes_ += b.capacity * sizeof(float);
    idle_.emplace(b.capacity, std::move(b.data));
    // Over the cap, the largest idle buffers go first (they are the rarest to fit again).
    while (idle_bytes_ > Arena::kPoolBytes && !idle_.empty()) {
      auto last = std::prev(idle_.end());
      idle_bytes_ -= last->first * sizeof(float);
      idle_.erase(last);
    }
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, std::unique_ptr<float[]>> idle_;
  size_t idle_bytes_ = 0;
};

BufferPool& pool() {
  static BufferPool* p = new BufferPool();  // never destroyed: passes may end during exit
  return *p;
}

}  // namespace

Arena::~Arena() {
  for (Buffer& b : bufs_) pool().give(std::move(b));
}

TensorView Arena::f32(std::initializer_list<int64_t> ne) {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  Buffer& buf = bufs_.emplace_back(pool().take(static_cast<size_t>(n)));
  return TensorView::contiguous(buf.data.get(), DType::kF32, ne);
}

void Arena::release_since(size_t mark, const TensorView& keep) {
  size_t kept = bufs_.size();
  for (size_t i = mark; i < bufs_.size(); ++i) {
    if (bufs_[i].data.get() == keep.data) kept = i;
  }
  if (kept != bufs_.size() && kept != mark) std::swap(bufs_[mark], bufs_[kept]);  // `keep` stays valid
  const size_t keep_count = kept != bufs_.size() ? mark + 1 : mark;
  for (size_t i = keep_count; i < bufs_.size(); ++i) pool().give(std::move(bufs_[i]));
  bufs_.resize(keep_count);
}

}  // namespace paddock
