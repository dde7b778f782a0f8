// The generation loop on the fixture models with the ref backend: greedy against the model's
// own argmax loop and llama.cpp's golden tokens, stops, limits, cancellation, seeds, grammars.
#include "engine/completion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "tests/support/fixtures.h"

namespace paddock::engine {
namespace {

std::string model_path(const std::string& name) { return testing::fixtures_dir() + "/models/" + name; }

std::unique_ptr<LoadedModel> load(const std::string& name, EngineOptions o = {}) {
  o.backend = BackendKind::kRef;
  auto m = LoadedModel::load(model_path(name), o);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : nullptr;
}

const LoadedModel& stories() {
  static const std::unique_ptr<LoadedModel> m = load("stories260K.gguf");
  return *m;
}

struct Outcome {
  Status status;
  CompletionStats stats;
  std::string text;
  std::vector<std::string> pieces;
  std::vector<int32_t> ids;  // from logprobs (asked for by greedy())
};

Outcome run(const LoadedModel& m, const CompletionParams& p, const PieceFn& extra = {}) {
  Outcome r;
  auto kv = m.make_kv_cache();
  EXPECT_TRUE(kv.ok()) << kv.status().to_string();
  auto st = complete(m, *kv, p, [&](const Piece& piece) {
    r.text += piece.text;
    r.pieces.push_back(piece.text);
    for (const TokenInfo& t : piece.logprobs) r.ids.push_back(t.id);
    return !extra || extra(piece);
  });
  if (st.ok()) {
    r.stats = *st;
  } else {
    r.status = st.status();
  }
  return r;
}

CompletionParams greedy(const std::string& prompt, int64_t n) {
  CompletionParams p;
  p.prompt = prompt;
  p.sampling.temperature = 0;
  p.sampling.logprobs = true;
  p.num_predict = n;
  return p;
}

// Argmax decoding straight on the model, as a second opinion on the engine's loop.
std::vector<int32_t> model_argmax_loop(const LoadedModel& m, std::vector<int32_t> tokens, int n) {
  auto kv = m.make_kv_cache();
  std::vector<int32_t> pos(tokens.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
  auto logits = m.model().forward(m.backend(), *kv, tokens, pos, false);
  std::vector<int32_t> out;
  for (int i = 0; i < n && logits.ok(); ++i) {
    const auto id = static_cast<int32_t>(std::max_element(logits->begin(), logits->end()) - logits->begin());
    out.push_back(id);
    if (m.tokenizer().is_eog(id)) break;
    const int32_t p[1] = {static_cast<int32_t>(kv->used())};
    const int32_t t[1] = {id};
    logits = m.model().forward(m.backend(), *kv, t, p, false);
  }
  EXPECT_TRUE(logits.ok()) << logits.status().to_string();
  return out;
}

TEST(Completion, GreedyEqualsTheModelsArgmaxLoop) {
  PADDOCK_REQUIRE_FIXTURES();
  const LoadedModel& m = stories();
  const Outcome r = run(m, greedy("Once upon a time", 24));
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  const std::vector<int32_t> expected =
      model_argmax_loop(m, m.tokenizer().encode("Once upon a time", true, true), 24);
  EXPECT_EQ(r.ids, expected);
  EXPECT_EQ(r.stats.eval_count, 24);
  EXPECT_EQ(r.stats.done_reason, "length");
  EXPECT_EQ(r.stats.prompt_eval_count, 5);
}

TEST(Completion, GreedyMatchesGoldenTokensUpToTheFirstNearTie) {
  PADDOCK_REQUIRE_FIXTURES();
  const LoadedModel& m = stories();
  std::ifstream in(testing::fixtures_dir() + "/golden/stories260K.logits.jsonl");
  ASSERT_TRUE(in.good());
  std::string line;
  int prompts = 0;
  int compared = 0;
  while (std::getline(in, line)) {
    const auto g = nlohmann::json::parse(line);
    const std::string prompt = g["prompt"];
    SCOPED_TRACE(prompt);
    const auto golden_ids = g["ids"].get<std::vector<int32_t>>();
    const std::vector<int32_t> ids = m.tokenizer().encode(prompt, true, false);
    ASSERT_EQ(ids, golden_ids);
    ++prompts;

    CompletionParams p = greedy("", 32);
    p.tokens = ids;
    const Outcome r = run(m, p);
    ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
    const auto want = g["greedy"].get<std::vector<int32_t>>();
    const auto margins = g["margins"].get<std::vector<double>>();
    for (size_t k = 0; k < want.size(); ++k) {
      const double top = g["steps"][k][0][1].get<double>();
      if (margins[k] < std::max(0.1, 0.05 + 0.005 * std::fabs(top))) break;  // near-tie: may diverge
      ASSERT_LT(k, r.ids.size());
      EXPECT_EQ(r.ids[k], want[k]) << "step " << k;
      ++compared;
    }
    if (r.ids == want && g.contains("text")) {
      EXPECT_EQ(r.text, g["text"].get<std::string>());
    }
  }
  EXPECT_EQ(prompts, 7);
  EXPECT_GT(compared, 7);
}

TEST(Completion, StopStringSplitAcrossTokensEndsGeneration) {
  PADDOCK_REQUIRE_FIXTURES();
  const LoadedModel& m = stories();
  const Outcome full = run(m, greedy("Once upon a time", 32));
  ASSERT_TRUE(full.status.is_ok());
  // A stop string made of the end of one token's text and the start of the next one's.
  std::string stop;
  for (size_t k = 4; k + 1 < full.pieces.size() && stop.empty(); ++k) {
    const std::string& a = full.pieces[k];
    const std::string& b = full.pieces[k + 1];
    if (a.size() >= 2 && b.size() >= 2) stop = a.substr(a.size() - 2) + b.substr(0, 2);
  }
  ASSERT_FALSE(stop.empty());
  CompletionParams p = greedy("Once upon a time", 32);
  p.stop = {"never appears", stop};
  const Outcome r = run(m, p);
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  EXPECT_EQ(r.stats.done_reason, "stop");
  EXPECT_EQ(r.stats.stop_sequence, stop);
  EXPECT_EQ(r.text, full.text.substr(0, full.text.find(stop)));
  EXPECT_LT(r.stats.eval_count, 32);
  for (const std::string& piece : r.pieces) EXPECT_EQ(piece.find(stop), std::string::npos);
}

TEST(Completion, StopStringThatNeverCompletesIsReleasedAtTheEnd) {
  PADDOCK_REQUIRE_FIXTURES();
  const LoadedModel& m = stories();
  const Outcome full = run(m, greedy("Once upon a time", 16));
  ASSERT_TRUE(full.status.is_ok());
  ASSERT_GE(full.text.size(), 4u);
  CompletionParams p = greedy("Once upon a time", 16);
  const std::string tail = full.text.substr(full.text.size() - 3);
  p.stop = {tail + "\x01never"};
  const Outcome r = run(m, p);
  ASSERT_TRUE(r.status.is_ok());
  EXPECT_EQ(r.stats.done_reason, "length");
  EXPECT_EQ(r.stats.stop_sequence, "");
  EXPECT_EQ(r.text, full.text);
  // The held-back tail came in the last piece, after generation ended.
  ASSERT_FALSE(r.pieces.empty());
  EXPECT_GE(r.pieces.back().size(), tail.size());
  EXPECT_EQ(r.pieces.back().substr(r.pieces.back().size() - tail.size()), tail);
}

TEST(Completion, NumPredictLimitsTokens) {
  PADDOCK_REQUIRE_FIXTURES();
  const Outcome r = run(stories(), greedy("Once upon a time", 5));
  ASSERT_TRUE(r.status.is_ok());
  EXPECT_EQ(r.stats.eval_count, 5);
  EXPECT_EQ(r.ids.size(), 5u);
  EXPECT_EQ(r.stats.done_reason, "length");
  EXPECT_GE(r.stats.eval_duration_ns, 0);
  EXPECT_GT(r.stats.prompt_eval_duration_ns, 0);
}

TEST(Completion, FullContextEndsWithLength) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto m = load("stories260K.gguf", {.num_ctx = 16});
  ASSERT_TRUE(m);
  ASSERT_EQ(m->n_ctx(), 16);
  // num_predict -2: stop when the context is full (-1 would shift the context and go on).
  const Outcome r = run(*m, greedy("Once upon a time", -2));
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  EXPECT_EQ(r.stats.done_reason, "length");
  // 5 prompt cells, then every sampled token but the last is fed back: 16 - 5 + 1.
  EXPECT_EQ(r.stats.eval_count, 12);

  // A prompt longer than the context keeps num_keep tokens and the most recent ones.
  std::string long_prompt;
  for (int i = 0; i < 5; ++i) long_prompt += "Lily and Tom went to the park. ";
  CompletionParams p = greedy(long_prompt, -2);
  const Outcome t = run(*m, p);
  ASSERT_TRUE(t.status.is_ok()) << t.status.to_string();
  EXPECT_GT(t.stats.truncated_tokens, 0);
  EXPECT_EQ(t.stats.prompt_eval_count, 16);
  EXPECT_EQ(t.stats.eval_count, 1);
  EXPECT_EQ(t.stats.done_reason, "length");
}

TEST(Completion, NoGenerationOutlivesTenContexts) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto m = load("stories260K.gguf", {.num_ctx = 16});
  ASSERT_TRUE(m);
  // A grammar that never lets the model end, so only the bound stops it (Ollama's 10 x num_ctx).
  for (const int64_t num_predict : {int64_t{-1}, int64_t{0}, int64_t{1} << 40}) {
    CompletionParams p = greedy("Once upon a time", num_predict);
    p.sampling.logprobs = false;
    p.grammar = "root ::= \"a\" root";
    const Outcome r = run(*m, p);
    ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
    EXPECT_EQ(r.stats.done_reason, "length") << num_predict;
    EXPECT_EQ(r.stats.eval_count, 160) << num_predict;
  }
}

TEST(Completion, CancelDuringPrefillStopsBeforeAnyOutput) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto m = load("stories260K.gguf", {.num_batch = 4});
  ASSERT_TRUE(m);
  CompletionParams p = greedy("Lily and Tom went to the park. They saw a big tree with many red apples.", 8);
  int polls = 0;
  p.is_cancelled = [&] { return ++polls >= 3; };
  const Outcome r = run(*m, p);
  EXPECT_EQ(r.status.code(), Code::kCancelled);
  EXPECT_EQ(polls, 3);  // the third prefill batch never ran
  EXPECT_TRUE(r.pieces.empty());
}

TEST(Completion, CancelDuringDecode) {
  PADDOCK_REQUIRE_FIXTURES();
  // By the callback returning false.
  int seen = 0;
  const Outcome r = run(stories(), greedy("Once upon a time", 32), [&](const Piece&) { return ++seen < 3; });
  EXPECT_EQ(r.status.code(), Code::kCancelled);
  EXPECT_EQ(r.pieces.size(), 3u);
  // By is_cancelled turning true after a few tokens.
  CompletionParams p = greedy("Once upon a time", 32);
  int pieces = 0;
  p.is_cancelled = [&] { return pieces >= 2; };
  const Outcome c = run(stories(), p, [&](const Piece&) { return ++pieces > 0; });
  EXPECT_EQ(c.status.code(), Code::kCancelled);
  EXPECT_EQ(c.pieces.size(), 2u);
}

TEST(Completion, SameSeedSameText) {
  PADDOCK_REQUIRE_FIXTURES();
  CompletionParams p;
  p.prompt = "Once upon a time";
  p.num_predict = 24;
  p.sampling.temperature = 1.0f;
  p.sampling.top_k = 0;
  p.sampling.top_p = 1.0f;
  p.sampling.seed = 1234;
  const Outcome a = run(stories(), p);
  const Outcome b = run(stories(), p);
  ASSERT_TRUE(a.status.is_ok());
  ASSERT_TRUE(b.status.is_ok());
  EXPECT_EQ(a.text, b.text);
  EXPECT_FALSE(a.text.empty());
}

TEST(Completion, JsonSchemaFormatGivesParseableJson) {
  PADDOCK_REQUIRE_FIXTURES();
  CompletionParams p;
  p.prompt = "Once upon a time";
  p.num_predict = 200;
  p.sampling.temperature = 0;
  p.format = R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},)"
             R"("age":{"type":"integer","minimum":0,"maximum":99}},"required":["name","age"],)"
             R"("additionalProperties":false})";
  const Outcome r = run(stories(), p);
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  EXPECT_EQ(r.stats.done_reason, "stop") << r.text;
  const auto j = nlohmann::json::parse(r.text, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.text;
  EXPECT_TRUE(j["name"].is_string());
  EXPECT_TRUE(j["age"].is_number_integer());
}

TEST(Completion, BadFormatIsInvalidArgument) {
  PADDOCK_REQUIRE_FIXTURES();
  CompletionParams p = greedy("Once", 4);
  p.format = "[1, 2]";
  EXPECT_EQ(run(stories(), p).status.code(), Code::kInvalidArgument);
  p.format = "json";
  p.grammar = "root ::= \"a\"";
  EXPECT_EQ(run(stories(), p).status.code(), Code::kInvalidArgument);
}

TEST(Completion, Utf8IsNeverSplitAcrossPieces) {
  PADDOCK_REQUIRE_FIXTURES();
  // The stories vocabulary has no tokens for these characters: the grammar forces byte
  // tokens, each carrying part of a character.
  CompletionParams p = greedy("Once", 40);
  p.grammar = R"(root ::= "é" "ü" "你好")";
  const Outcome r = run(stories(), p);
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  EXPECT_EQ(r.text, "éü你好");
  EXPECT_GT(r.ids.size(), r.pieces.size());  // several tokens per piece
  for (const std::string& piece : r.pieces) EXPECT_TRUE(gguf::is_valid_utf8(piece)) << piece;
  EXPECT_EQ(r.stats.done_reason, "stop");
}

TEST(Completion, EmptyPromptIsAnError) {
  PADDOCK_REQUIRE_FIXTURES();
  CompletionParams p = greedy("", 4);
  p.add_special = false;
  EXPECT_EQ(run(stories(), p).status.code(), Code::kInvalidArgument);
}

TEST(Completion, ChatModelStopsAtEndOfTurn) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto m = load("tiny-tolstoy-chat-q4_k_m.gguf", {.num_ctx = 512});
  ASSERT_TRUE(m);
  // A Llama 3 chat prompt rendered by hand (BOS comes from the tokenizer).
  const std::string prompt =
      "<|start_header_id|>user<|end_header_id|>\n\n"
      "Well, Prince, so Genoa and Lucca are now just family estates of the Buonapartes."
      "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
  CompletionParams p = greedy(prompt, 200);
  const Outcome r = run(*m, p);
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  EXPECT_EQ(r.stats.done_reason, "stop") << r.text;
  EXPECT_LT(r.stats.eval_count, 200);
  EXPECT_FALSE(r.text.empty());
  EXPECT_EQ(r.text.find("<|eot_id|>"), std::string::npos);
  EXPECT_EQ(r.stats.eval_count, static_cast<int64_t>(r.ids.size()) + 1);  // + the EOG token
}

TEST(Generate, StreamsTheSameTextItReturns) {
  PADDOCK_REQUIRE_FIXTURES();
  std::string streamed;
  const auto text = generate(stories(), "Once upon a time", greedy("", 16), [&](std::string_view t) {
    streamed += t;
    return true;
  });
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_EQ(*text, streamed);
  EXPECT_EQ(*text, run(stories(), greedy("Once upon a time", 16)).text);
}

}  // namespace
}  // namespace paddock::engine
