// Sliding-window models (gemma3, from Ollama's file layout) with the windowed layers' KV
// cells in rings: decoding, batching, context shift and prefix reuse agree with caches that
// hold every position, on the ref backend.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/completion.h"
#include "engine/sequence.h"
#include "model/registry.h"
#include "tests/support/fixtures.h"

namespace paddock::engine {
namespace {

constexpr const char* kModel = "tiny-gemma3-ollama-q4_k_m.gguf";  // window 16 on 5 of 6 layers
const std::string kLong =
    "Once upon a time, there was a little girl named Lily. She liked to play in the park with her dog";

std::unique_ptr<LoadedModel> load(int64_t num_ctx, int64_t num_batch) {
  auto m = LoadedModel::load(
      testing::fixtures_dir() + "/models/" + kModel,
      {.num_ctx = num_ctx, .num_batch = num_batch, .backend = BackendKind::kRef, .kv_type = DType::kF32});
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : nullptr;
}

struct Generated {
  std::vector<int32_t> ids;
  std::vector<float> logprobs;
  std::vector<float> margins;  // best minus second-best log-probability at each step
  CompletionStats stats;
};

Generated greedy(const LoadedModel& m, KvCache& kv, const std::string& prompt, int64_t n) {
  CompletionParams p;
  p.prompt = prompt;
  p.sampling.temperature = 0;
  p.sampling.logprobs = true;
  p.sampling.top_logprobs = 2;
  p.num_predict = n;
  for (int32_t id = 0; id < static_cast<int32_t>(m.n_vocab()); ++id) {
    if (m.tokenizer().is_eog(id)) p.sampling.logit_bias[id] = -INFINITY;  // run the full length
  }
  Generated r;
  const auto st = complete(m, kv, p, [&](const Piece& piece) {
    for (const TokenInfo& t : piece.logprobs) {
      r.ids.push_back(t.id);
      r.logprobs.push_back(t.logprob);
      r.margins.push_back(t.top.size() >= 2 ? t.top[0].logprob - t.top[1].logprob : INFINITY);
    }
    return true;
  });
  EXPECT_TRUE(st.ok()) << st.status().to_string();
  if (st.ok()) r.stats = *st;
  return r;
}

// The same tokens, their log-probabilities close: a ring sums its cells in another order,
// and activations quantized to 8 bits (as llama.cpp quantizes them) or GELU's half-precision
// table turn such last-bit differences into whole steps now and then, which this tiny random
// model carries to a few hundredths of a log-probability (two ring sizes differ from each
// other as much); a ring that lost or misplaced a cell moves them by far more. Greedy choices
// may part at a near-tie of the reference (b): the comparison stops there, as
// compare_golden.py's does, and must have covered min_steps steps by then.
void expect_same(const Generated& a, const Generated& b, size_t min_steps) {
  ASSERT_EQ(a.ids.size(), b.ids.size());
  ASSERT_EQ(a.logprobs.size(), b.logprobs.size());
  size_t i = 0;
  for (; i < b.ids.size() && b.margins[i] >= 0.2f; ++i) {
    EXPECT_EQ(a.ids[i], b.ids[i]) << i;
    EXPECT_NEAR(a.logprobs[i], b.logprobs[i], 0.1) << i;
    if (a.ids[i] != b.ids[i]) return;
  }
  EXPECT_GE(i, min_steps) << "a near-tie at step " << i << " cut the comparison short";
}

TEST(SlidingWindow, RingsDecodeAsCachesOfEveryPosition) {
  PADDOCK_REQUIRE_FIXTURES();
  // Passes of 5 tokens: windowed layers hold 16 + 5 - 1 cells. Passes of 256: every cell.
  const auto rings = load(256, 5);
  const auto full = load(256, 256);
  ASSERT_TRUE(rings && full);
  EXPECT_LT(rings->kv_cache_bytes(), full->kv_cache_bytes() / 3);
  auto kv_r = rings->make_kv_cache();
  auto kv_f = full->make_kv_cache();
  ASSERT_TRUE(kv_r.ok() && kv_f.ok());
  const Generated a = greedy(*rings, *kv_r, kLong, 40);  // 20+ prompt tokens and 40 more: rings wrap
  const Generated b = greedy(*full, *kv_f, kLong, 40);
  EXPECT_EQ(a.ids.size(), 40u);
  expect_same(a, b, 20);
}

// Placement sizes the KV cache before the model loads: arch_hparams must already know which
// layers slide a window, and the GPU fit then counts their rings (offload.cpp).
TEST(SlidingWindow, ArchHparamsKnowTheWindowsBeforeALoad) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto m = load(256, 5);
  ASSERT_TRUE(m);
  auto file = gguf::File::open(testing::fixtures_dir() + "/models/tiny-gemma3-q4_k_m.gguf");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const Result<HParams> hp = arch_hparams(**file);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  const std::vector<LayerParams>& loaded = m->model().hparams().layers;
  ASSERT_EQ(hp->layers.size(), loaded.size());
  int windowed = 0;
  for (size_t il = 0; il < loaded.size(); ++il) {
    EXPECT_EQ(hp->layers[il].window, loaded[il].window) << "layer " << il;
    EXPECT_EQ(hp->layers[il].rope_freq_base, loaded[il].rope_freq_base) << "layer " << il;
    windowed += hp->layers[il].window > 0;
  }
  EXPECT_EQ(windowed, 5);
  EXPECT_EQ(kv_cache_bytes(kv_config(*hp, 256, DType::kF32, resolve_num_batch(5, *hp, 256))),
            m->kv_cache_bytes());
}

// The scheduler sizes a model before it loads with kv_cache_bytes_of: what the load then
// allocates, rings included (windowed layers much smaller than full ones at 4096 cells).
TEST(SlidingWindow, TheSchedulersKvEstimateIsWhatTheEngineAllocates) {
  PADDOCK_REQUIRE_FIXTURES();
  for (const char* model : {"tiny-gemma3-q4_k_m", "tiny-gptoss-mxfp4", "tiny-qwen3-q8_0"}) {
    const std::string path = testing::fixtures_dir() + "/models/" + model + ".gguf";
    auto file = gguf::File::open(path);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    for (const DType kv_type : {DType::kF16, DType::kQ8_0}) {
      auto m = LoadedModel::load(
          path, {.num_ctx = 4096, .num_batch = 64, .backend = BackendKind::kRef, .kv_type = kv_type});
      ASSERT_TRUE(m.ok()) << m.status().to_string();
      const Result<uint64_t> estimate =
          kv_cache_bytes_of(**file, {.num_ctx = 4096, .num_batch = 64, .kv_type = kv_type});
      ASSERT_TRUE(estimate.ok()) << estimate.status().to_string();
      EXPECT_EQ(*estimate, (*m)->kv_cache_bytes()) << model << " " << dtype_name(kv_type);
    }
  }
  auto gemma = gguf::File::open(testing::fixtures_dir() + "/models/tiny-gemma3-q4_k_m.gguf");
  ASSERT_TRUE(gemma.ok());
  const Result<HParams> hp = arch_hparams(**gemma);
  ASSERT_TRUE(hp.ok());
  HParams full = *hp;
  for (LayerParams& l : full.layers) l.window = 0;
  const Result<uint64_t> rings = kv_cache_bytes_of(**gemma, {.num_ctx = 4096, .num_batch = 64});
  ASSERT_TRUE(rings.ok());
  EXPECT_LT(*rings * 3, kv_cache_bytes(kv_config(full, 4096, DType::kF16, 64)));
}

TEST(SlidingWindow, ContextShiftRunsThroughRings) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto m = load(48, 4);
  ASSERT_TRUE(m);
  auto kv = m->make_kv_cache();
  ASSERT_TRUE(kv.ok());
  const Generated r = greedy(*m, *kv, "Once upon a time", 200);
  EXPECT_EQ(r.stats.eval_count, 200);
  EXPECT_EQ(r.stats.done_reason, "length");
  EXPECT_LE(kv->used(), 48);
}

TEST(SlidingWindow, PrefixReuseKeepsOnlyWhatTheRingsStillHold) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto m = load(256, 16);  // rings of 31 cells
  ASSERT_TRUE(m);
  auto kv = m->make_kv_cache();
  ASSERT_TRUE(kv.ok());
  const auto n_prompt = static_cast<int64_t>(m->tokenizer().encode(kLong, true, false).size());
  const Generated first = greedy(*m, *kv, kLong, 8);
  EXPECT_EQ(first.stats.prompt_eval_count, n_prompt);

  // The same prompt again: the rings still hold the window of its last position (they roll
  // back up to n_batch - 1 positions), so only the last token is evaluated.
  const Generated again = greedy(*m, *kv, kLong, 8);
  EXPECT_EQ(again.stats.prompt_eval_count, n_prompt);
  EXPECT_EQ(again.stats.prompt_cached_count, n_prompt - 1);
  expect_same(again, first, 8);

  // A prompt sharing only the first words: the rings lost the cells its next position
  // would see, so it is evaluated whole, and decodes as on a fresh cache.
  const std::string other = "Once upon a time, there was a big red ball";
  const Generated shorter = greedy(*m, *kv, other, 8);
  EXPECT_EQ(shorter.stats.prompt_eval_count,
            static_cast<int64_t>(m->tokenizer().encode(other, true, false).size()));
  EXPECT_EQ(shorter.stats.prompt_cached_count, 0);
  auto fresh_kv = m->make_kv_cache();
  ASSERT_TRUE(fresh_kv.ok());
  expect_same(shorter, greedy(*m, *fresh_kv, other, 8), 8);
}

}  // namespace
}  // namespace paddock::engine
