#include "model/arena.h"

#include <gtest/gtest.h>

namespace paddock {
namespace {

TEST(Arena, ReleaseSinceKeepsTheKeptBufferAndItsContents) {
  Arena a;
  TensorView first = a.f32({4});
  const size_t mark = a.mark();
  a.f32({8});
  TensorView kept = a.f32({3, 2});
  a.f32({16});
  for (int i = 0; i < 6; ++i) static_cast<float*>(kept.data)[i] = static_cast<float>(i);
  static_cast<float*>(first.data)[0] = 42.0f;
  a.release_since(mark, kept);
  EXPECT_EQ(a.mark(), mark + 1);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<float*>(kept.data)[i], static_cast<float>(i));
  EXPECT_EQ(static_cast<float*>(first.data)[0], 42.0f);
  // A view from before the mark is not released, whatever `keep` is.
  a.release_since(mark, first);
  EXPECT_EQ(a.mark(), mark);
  EXPECT_EQ(static_cast<float*>(first.data)[0], 42.0f);
}

TEST(Arena, FinishedPassesBuffersAreReused) {
  void* data = nullptr;
  {
    Arena a;
    data = a.f32({1000, 7}).data;
  }
  Arena b;
  // Best fit: a smaller request takes the idle buffer instead of new memory.
  EXPECT_EQ(b.f32({900, 7}).data, data);
  EXPECT_NE(b.f32({900, 7}).data, data);  // in use by this pass: a fresh one
}

}  // namespace
}  // namespace paddock
