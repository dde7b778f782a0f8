#include "backend/vulkan/vulkan_backend.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "backend/graph.h"
#include "base/env.h"

namespace paddock {
namespace {

// Descriptor sets are kept across passes by the buffers they name; a buffer destroyed and
// another made in its place (drivers reuse the handle) must not be read through a kept set.
TEST(VulkanBackend, PassesAfterBuffersAreReplacedReadTheNewOnes) {
  Result<std::unique_ptr<Backend>> made =
      make_vulkan_backend(env_get_or("VULKAN_DEVICE", "llvmpipe"), {.gpu = true});
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  Backend& be = **made;
  constexpr int64_t kN = 1000;
  for (int round = 0; round < 4; ++round) {
    std::vector<float> a(kN), b(kN);
    for (int64_t i = 0; i < kN; ++i) {
      a[static_cast<size_t>(i)] = static_cast<float>(i + round);
      b[static_cast<size_t>(i)] = static_cast<float>(1000 * round);
    }
    const auto put = [&](const std::vector<float>& v) {
      std::unique_ptr<Buffer> buf = std::move(be.device().alloc(v.size() * sizeof(float))).value();
      buf->set(0, {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)});
      return buf;
    };
    const std::unique_ptr<Buffer> ba = put(a), bb = put(b);
    Graph g;
    const TensorView sum = g.add(TensorView::in_buffer(*ba, 0, DType::kF32, {kN}),
                                 TensorView::in_buffer(*bb, 0, DType::kF32, {kN}), "sum");
    ASSERT_TRUE(g.allocate(be.device()).is_ok());
    ASSERT_TRUE(be.compute(g).is_ok());
    std::vector<float> got(kN);
    sum.buffer->get(sum.offset, {reinterpret_cast<uint8_t*>(got.data()), got.size() * sizeof(float)});
    for (int64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(got[static_cast<size_t>(i)], a[static_cast<size_t>(i)] + b[static_cast<size_t>(i)])
          << "round " << round << ", element " << i;
    }
  }
}

}  // namespace
}  // namespace paddock
