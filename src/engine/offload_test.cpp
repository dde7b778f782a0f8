#include "engine/offload.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/loaded_model.h"

namespace paddock::engine {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(AutomaticContext, OllamasTiersByGpuMemory) {
  EXPECT_EQ(num_ctx_tier(0), 4096) << "no GPU";
  EXPECT_EQ(num_ctx_tier(23 * kGiB - 1), 4096);
  EXPECT_EQ(num_ctx_tier(23 * kGiB), 32768);
  EXPECT_EQ(num_ctx_tier(47 * kGiB - 1), 32768);
  EXPECT_EQ(num_ctx_tier(47 * kGiB), 262144);
}

// A model of `layers` layers of 1 GiB, an output of 1 GiB, a compute reserve of 1 GiB and
// `kv_cell` bytes of KV cache per cell and layer.
auto model(size_t layers, uint64_t kv_cell) {
  return [=](int64_t n_ctx) {
    FitRequest r;
    r.layer_weights.assign(layers, kGiB);
    r.output_weights = kGiB;
    r.compute = kGiB;
    r.kv_per_layer = kv_cell * static_cast<uint64_t>(n_ctx);
    return r;
  };
}

TEST(AutomaticContext, ATierLowerWhileTheModelDoesNotFitTheGpuWhole) {
  // 12 GiB of weights and reserve, 10 GiB of KV cache at 262144 cells.
  EXPECT_EQ(fitting_num_ctx(80 * kGiB, model(10, 4096)), 262144);
  // 40 GiB of KV cache at 262144 cells is too much for 48 GiB; 5 GiB at 32768 fits.
  EXPECT_EQ(fitting_num_ctx(48 * kGiB, model(10, 16384)), 32768);
  EXPECT_EQ(fitting_num_ctx(80 * kGiB, model(10, 16384)), 262144);
  // Weights alone past the GPU: Ollama's CPU default.
  EXPECT_EQ(fitting_num_ctx(24 * kGiB, model(30, 64)), 4096);
  EXPECT_EQ(fitting_num_ctx(0, model(1, 64)), 4096);
}

TEST(AutomaticContext, ALoadOutOfMemoryTriesTheTierBelow) {
  EXPECT_EQ(lower_num_ctx_tier(262144), 32768);
  EXPECT_EQ(lower_num_ctx_tier(131072), 32768) << "a trained context between the tiers";
  EXPECT_EQ(lower_num_ctx_tier(32768), 4096);
  EXPECT_EQ(lower_num_ctx_tier(8192), 4096);
  EXPECT_EQ(lower_num_ctx_tier(4096), 0) << "the least tier has none below";
  EXPECT_EQ(lower_num_ctx_tier(2048), 0);
}

TEST(AutomaticContext, TheRequestAndOllamaContextLengthComeFirst) {
  unsetenv("PADDOCK_CONTEXT_LENGTH");
  unsetenv("OLLAMA_CONTEXT_LENGTH");
  EXPECT_TRUE(automatic_context(0));
  EXPECT_FALSE(automatic_context(2048));
  EXPECT_EQ(resolve_num_ctx(0, 0, 32768), 32768);
  EXPECT_EQ(resolve_num_ctx(0, 8192, 262144), 8192) << "clamped to the trained context";
  EXPECT_EQ(resolve_num_ctx(2048, 0, 262144), 2048);
  setenv("OLLAMA_CONTEXT_LENGTH", "16384", 1);
  EXPECT_FALSE(automatic_context(0));
  EXPECT_EQ(resolve_num_ctx(0, 0, 262144), 16384);
  unsetenv("OLLAMA_CONTEXT_LENGTH");
}

}  // namespace
}  // namespace paddock::engine
