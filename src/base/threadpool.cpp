#include "base/threadpool.h"

#include <algorithm>
#include <chrono>

#include "base/check.h"
#include "base/cpu_count.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace paddock {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long a worker spins for the next job before it sleeps: long enough to bridge the gap
// between consecutive ops of a decode step, short enough that an idle pool goes quiet.
constexpr auto kSpinFor = std::chrono::microseconds(2000);

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads < 1) n_threads = default_thread_count();
  size_ = n_threads;
  next_chunk_.store(0, std::memory_order_relaxed);  // no job: a count of 0 chunks to claim
  threads_.reserve(static_cast<size_t>(size_ - 1));
  for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::drain(int thread_idx) {
  for (;;) {
    const uint64_t claim = next_chunk_.fetch_add(1, std::memory_order_acq_rel);
    const auto c = static_cast<int64_t>(claim & 0xffffffffu);
    if (c >= static_cast<int64_t>(claim >> 32)) return;
    int64_t begin = 0, end = 0;
    switch (split_) {
      case Split::kEven:
        begin = n_ * c / size_;
        end = n_ * (c + 1) / size_;
        break;
      case Split::kFixed:
        begin = c * grain_;
        end = std::min(n_, begin + grain_);
        break;
      case Split::kGuided:
        begin = bounds_[static_cast<size_t>(c)];
        end = bounds_[static_cast<size_t>(c) + 1];
        break;
    }
    if (begin < end) call_(ctx_, begin, end, thread_idx);
    done_chunks_.fetch_add(1, std::memory_order_release);
  }
}

void ThreadPool::run(int64_t n, Split split, int64_t grain, void* ctx, Trampoline call) {
  if (n <= 0) return;
  if (size_ == 1 || n == 1 || (split != Split::kEven && grain >= n)) {  // one chunk
    call(ctx, 0, n, 0);
    return;
  }
  PADDOCK_CHECK_MSG(!busy_.exchange(true, std::memory_order_acquire), "nested or concurrent parallel_for");
  int64_t n_chunks = size_;
  if (split == Split::kFixed) n_chunks = (n + grain - 1) / grain;
  if (split == Split::kGuided) {
    bounds_.assign(1, 0);
    for (int64_t left = n; left > 0;) {
      const int64_t take = std::min(left, std::max(grain, (left + 2 * size_ - 1) / (2 * size_)));
      bounds_.push_back(bounds_.back() + take);
      left -= take;
    }
    n_chunks = static_cast<int64_t>(bounds_.size()) - 1;
  }
  PADDOCK_CHECK_MSG(n_chunks < (int64_t{1} << 31), "parallel_for_chunked: too many chunks");
  ctx_ = ctx;
  call_ = call;
  n_ = n;
  split_ = split;
  grain_ = grain;
  n_chunks_ = n_chunks;
  done_chunks_.store(0, std::memory_order_relaxed);
  next_chunk_.store(static_cast<uint64_t>(n_chunks) << 32, std::memory_order_release);
  {
    std::lock_guard lock(mu_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  drain(0);
  // A worker may have been preempted inside its chunk: spin a little, then give it the core.
  for (int spins = 0; done_chunks_.load(std::memory_order_acquire) != n_chunks_; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  busy_.store(false, std::memory_order_release);
}

void ThreadPool::worker(int idx) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = generation_.load(std::memory_order_acquire);
    if (gen == seen) {
      const auto deadline = std::chrono::steady_clock::now() + kSpinFor;
      for (int spins = 1; gen == seen; ++spins) {
        cpu_relax();
        gen = generation_.load(std::memory_order_acquire);
        if (spins % 256 == 0 && std::chrono::steady_clock::now() > deadline) break;
      }
      if (gen == seen) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        gen = generation_.load(std::memory_order_acquire);
      }
    }
    seen = gen;
    if (stop_.load(std::memory_order_acquire)) return;
    drain(idx);
  }
}

}  // namespace paddock
