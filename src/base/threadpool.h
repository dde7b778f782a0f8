// A fork-join thread pool for kernels: parallel_for(n, fn) splits [0, n) into size() fixed
// contiguous chunks, [c*n/size, (c+1)*n/size), and returns when every chunk is done. Threads
// (the caller included) claim chunks from an atomic counter, so a worker the OS has not
// scheduled yet never holds the caller up: the caller takes its chunk instead. A pool of
// size 1 has no worker threads and costs nothing. Workers spin briefly between jobs (decode
// issues hundreds of small ops per token, and waking a sleeping thread costs more than most
// of them) and then sleep on a condition variable, so an idle pool uses no CPU.
// Invariants: one parallel_for at a time per pool (nesting or concurrent use is a bug and is
// checked); fn must not throw; thread_idx is the running thread's index (< size(), unique
// among chunks running at the same time), so it can pick per-thread scratch; which thread
// runs which chunk varies, so results must not depend on it.
//   ThreadPool pool(2);
//   pool.parallel_for(rows, [&](int64_t begin, int64_t end, int thread) { ... });
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace paddock {

class ThreadPool {
 public:
  // n_threads < 1 means default_thread_count(): one per physical core the process may use.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }

  // fn(begin, end, thread_idx) for each non-empty chunk; thread_idx < size().
  template <typename F>
  void parallel_for(int64_t n, F&& fn) {
    run(n, Split::kEven, 0, const_cast<void*>(static_cast<const void*>(&fn)),
        &trampoline<std::remove_reference_t<F>>);
  }

  // The same over chunks of `grain` items ([c*grain, min(n, (c+1)*grain))), claimed one at a
  // time, so a thread slowed down by the OS simply takes fewer chunks (load balancing for big
  // ops such as mul_mat). grain < 1 counts as 1.
  template <typename F>
  void parallel_for_chunked(int64_t n, int64_t grain, F&& fn) {
    run(n, Split::kFixed, grain < 1 ? 1 : grain, const_cast<void*>(static_cast<const void*>(&fn)),
        &trampoline<std::remove_reference_t<F>>);
  }

  // Guided: contiguous chunks that shrink as the work runs out, each 1/(2*size()) of what is
  // left but at least min_grain items, claimed one at a time. Few, long chunks (streaming
  // reads stay sequential) and a short tail, so threads finish together (decode's mul_mat).
  template <typename F>
  void parallel_for_guided(int64_t n, int64_t min_grain, F&& fn) {
    run(n, Split::kGuided, min_grain < 1 ? 1 : min_grain, const_cast<void*>(static_cast<const void*>(&fn)),
        &trampoline<std::remove_reference_t<F>>);
  }

 private:
  using Trampoline = void (*)(void* ctx, int64_t begin, int64_t end, int thread);

  template <typename Fn>
  static void trampoline(void* ctx, int64_t b, int64_t e, int t) {
    (*static_cast<Fn*>(ctx))(b, e, t);
  }

  enum class Split { kEven, kFixed, kGuided };
  void run(int64_t n, Split split, int64_t grain, void* ctx, Trampoline call);
  void worker(int idx);
  // Claims and runs chunks of the current job until none is left.
  void drain(int thread_idx);

  int size_ = 1;
  std::vector<std::thread> threads_;
  // The current job. Its fields are written before next_chunk_ is reset (release), and read
  // only by a thread whose claim returned a valid chunk of that job, so they are never torn.
  void* ctx_ = nullptr;
  Trampoline call_ = nullptr;
  int64_t n_ = 0;
  Split split_ = Split::kEven;
  int64_t grain_ = 0;
  std::vector<int64_t> bounds_;  // kGuided: chunk c is [bounds_[c], bounds_[c + 1])
  int64_t n_chunks_ = 0;         // read by the caller only
  // (chunk count << 32) | next chunk index: a claim gets the index and the count of the same
  // job in one atomic read, so a late claim on a finished job (a worker leaving drain while
  // the caller already starts the next job) can never be mistaken for a chunk of the next.
  std::atomic<uint64_t> next_chunk_{0};
  std::atomic<int64_t> done_chunks_{0};
  std::atomic<uint64_t> generation_{0};  // bumped per job, to wake workers
  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace paddock
