#include "base/threadpool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace paddock {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 2, 7, 1025}) {
      std::vector<int> hits(static_cast<size_t>(n), 0);
      pool.parallel_for(n, [&](int64_t b, int64_t e, int t) {
        EXPECT_GE(t, 0);
        EXPECT_LT(t, threads);
        EXPECT_LT(b, e);
        for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
      });
      for (int h : hits) EXPECT_EQ(h, 1) << "threads " << threads << " n " << n;
    }
  }
}

TEST(ThreadPool, ChunksAreTheFixedContiguousSplit) {
  ThreadPool pool(3);
  std::mutex mu;
  std::set<std::pair<int64_t, int64_t>> chunks;
  pool.parallel_for(10, [&](int64_t b, int64_t e, int) {
    std::lock_guard lock(mu);
    chunks.insert({b, e});
  });
  const std::set<std::pair<int64_t, int64_t>> expected = {{0, 3}, {3, 6}, {6, 10}};
  EXPECT_EQ(chunks, expected);
}

TEST(ThreadPool, ChunkedCoversEveryIndexOnceInGrainSizedChunks) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 64, 1025}) {
      for (int64_t grain : {0, 1, 5, 64, 2000}) {
        std::mutex mu;
        std::set<std::pair<int64_t, int64_t>> chunks;
        std::vector<int> hits(static_cast<size_t>(n), 0);
        pool.parallel_for_chunked(n, grain, [&](int64_t b, int64_t e, int t) {
          EXPECT_LT(t, threads);
          std::lock_guard lock(mu);
          chunks.insert({b, e});
          for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
        });
        for (int h : hits) EXPECT_EQ(h, 1) << "threads " << threads << " n " << n << " grain " << grain;
        const int64_t g = std::max<int64_t>(grain, 1);
        // One call covers everything when a single chunk would; otherwise grain-sized pieces.
        if (threads > 1 && n > g) {
          EXPECT_EQ(static_cast<int64_t>(chunks.size()), (n + g - 1) / g);
          for (const auto& [b, e] : chunks) {
            EXPECT_EQ(b % g, 0);
            EXPECT_EQ(e, std::min(n, b + g));
          }
        }
      }
    }
  }
}

TEST(ThreadPool, GuidedChunksShrinkToTheMinimumAndCoverEveryIndexOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 64, 1025, 4008}) {
      for (int64_t min_grain : {0, 1, 5, 2000}) {
        std::mutex mu;
        std::vector<std::pair<int64_t, int64_t>> chunks;
        std::vector<int> hits(static_cast<size_t>(n), 0);
        pool.parallel_for_guided(n, min_grain, [&](int64_t b, int64_t e, int t) {
          EXPECT_LT(t, threads);
          std::lock_guard lock(mu);
          chunks.emplace_back(b, e);
          for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
        });
        const std::string what = "threads " + std::to_string(threads) + " n " + std::to_string(n) + " min " +
                                 std::to_string(min_grain);
        for (int h : hits) EXPECT_EQ(h, 1) << what;
        const int64_t g = std::max<int64_t>(min_grain, 1);
        if (threads == 1 || n <= g) {
          EXPECT_LE(chunks.size(), 1u) << what;
          continue;
        }
        // In index order: each chunk is half of what was left over the threads (rounded up),
        // never under the minimum except the very last one, and never growing.
        std::sort(chunks.begin(), chunks.end());
        int64_t left = n;
        for (size_t c = 0; c < chunks.size(); ++c) {
          const int64_t size = chunks[c].second - chunks[c].first;
          EXPECT_EQ(size, std::min(left, std::max(g, (left + 2 * threads - 1) / (2 * threads)))) << what;
          if (c > 0) {
            EXPECT_LE(size, chunks[c - 1].second - chunks[c - 1].first) << what;
          }
          left -= size;
        }
        EXPECT_EQ(left, 0) << what;
      }
    }
  }
}

TEST(ThreadPool, ThreadIndicesOfConcurrentChunksAreDistinct) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 200; ++rep) {
    std::atomic<int> in_use[2] = {0, 0};
    std::atomic<bool> clash{false};
    pool.parallel_for(2, [&](int64_t, int64_t, int t) {
      if (in_use[t].fetch_add(1) != 0) clash = true;
      in_use[t].fetch_sub(1);
    });
    EXPECT_FALSE(clash.load());
  }
}

TEST(ThreadPool, ManySmallJobsInARowAllComplete) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  for (int rep = 0; rep < 5000; ++rep) {
    pool.parallel_for(4, [&](int64_t b, int64_t e, int) { total.fetch_add(e - b); });
  }
  EXPECT_EQ(total.load(), 5000 * 4);
}

TEST(ThreadPool, ResultsMatchSerialSum) {
  ThreadPool pool(2);
  std::vector<double> v(100000);
  std::iota(v.begin(), v.end(), 1.0);
  std::vector<double> partial(2, 0.0);
  pool.parallel_for(static_cast<int64_t>(v.size()), [&](int64_t b, int64_t e, int) {
    double s = 0;
    for (int64_t i = b; i < e; ++i) s += v[static_cast<size_t>(i)];
    partial[b == 0 ? 0 : 1] = s;
  });
  EXPECT_DOUBLE_EQ(partial[0] + partial[1], 100000.0 * 100001.0 / 2.0);
}

}  // namespace
}  // namespace paddock
