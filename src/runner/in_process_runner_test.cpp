// The in-process Runner over stories260K with the ref backend: the Runner contract (chunks
// in order, a last chunk with done and timings, false from the callback cancels), option
// mapping, facts, tokenize/detokenize and the embeddings placeholder.
#include "runner/in_process_runner.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/completion.h"
#include "tests/support/fixtures.h"

namespace paddock::runner {
namespace {

const engine::EngineOptions kRef{.backend = engine::BackendKind::kRef};

std::string stories_path() { return testing::fixtures_dir() + "/models/stories260K.gguf"; }

std::unique_ptr<Runner> load_stories(int64_t num_ctx = 0) {
  auto r = make_in_process_factory(kRef)(LoadOptions{.model_path = stories_path(), .num_ctx = num_ctx});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(r).value() : nullptr;
}

CompletionRequest greedy(int64_t n) {
  CompletionRequest req;
  req.prompt = "Once upon a time";
  req.options.temperature = 0.0;
  req.options.num_predict = n;
  return req;
}

TEST(InProcessRunner, ChunksInOrderThenADoneChunkWithTimings) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto r = load_stories();
  ASSERT_TRUE(r);
  std::vector<CompletionChunk> chunks;
  const Status st = r->complete(greedy(12), [&](const CompletionChunk& c) {
    chunks.push_back(c);
    return true;
  });
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_GE(chunks.size(), 2u);
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_FALSE(chunks[i].done);
    EXPECT_FALSE(chunks[i].text.empty());
  }
  const CompletionChunk& last = chunks.back();
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.done_reason, "length");
  EXPECT_EQ(last.prompt_eval_count, 5);
  EXPECT_EQ(last.eval_count, 12);
  EXPECT_GT(last.prompt_eval_duration_ns, 0);
  EXPECT_GT(last.eval_duration_ns, 0);
  EXPECT_EQ(last.truncated_tokens, 0);

  // The text is what the engine generates for the same settings, in order.
  auto m = engine::LoadedModel::load(stories_path(), kRef);
  ASSERT_TRUE(m.ok());
  engine::CompletionParams p;
  p.sampling.temperature = 0;
  p.num_predict = 12;
  const auto text = engine::generate(**m, "Once upon a time", p);
  ASSERT_TRUE(text.ok());
  std::string joined;
  for (const CompletionChunk& c : chunks) joined += c.text;
  EXPECT_EQ(joined, *text);
}

TEST(InProcessRunner, APromptLongerThanTheContextIsCutAndSaysSo) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto r = load_stories(32);
  ASSERT_TRUE(r);
  CompletionRequest req = greedy(2);
  for (int i = 0; i < 5; ++i) req.prompt += " and they played all day in the sun";
  CompletionChunk last;
  ASSERT_TRUE(r->complete(req, [&](const CompletionChunk& c) {
                 last = c;
                 return true;
               }).is_ok());
  EXPECT_TRUE(last.done);
  EXPECT_LE(last.prompt_eval_count, 32);
  const auto tokens = r->tokenize(req.prompt);
  ASSERT_TRUE(tokens.ok());
  // What was evaluated and what was cut make the whole prompt (its tokens and BOS).
  EXPECT_EQ(last.prompt_eval_count + last.truncated_tokens, static_cast<int64_t>(tokens->size()) + 1);
}

TEST(InProcessRunner, ReturningFalseCancels) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto r = load_stories();
  ASSERT_TRUE(r);
  int calls = 0;
  const Status st = r->complete(greedy(32), [&](const CompletionChunk&) { return ++calls < 2; });
  EXPECT_EQ(st.code(), Code::kCancelled);
  EXPECT_EQ(calls, 2);

  // is_cancelled is polled from the start (during prompt processing).
  CompletionRequest req = greedy(32);
  req.is_cancelled = [] { return true; };
  calls = 0;
  EXPECT_EQ(r->complete(req, [&](const CompletionChunk&) { return ++calls > 0; }).code(), Code::kCancelled);
  EXPECT_EQ(calls, 0);

  // The runner is still usable afterwards.
  EXPECT_TRUE(r->complete(greedy(4), [](const CompletionChunk&) { return true; }).is_ok());
}

TEST(InProcessRunner, StopOptionAndLogprobs) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto r = load_stories();
  ASSERT_TRUE(r);
  std::string full;
  ASSERT_TRUE(r->complete(greedy(20), [&](const CompletionChunk& c) {
                 full += c.text;
                 return true;
               }).is_ok());
  ASSERT_GT(full.size(), 12u);
  CompletionRequest req = greedy(20);
  req.options.stop = {full.substr(8, 4)};
  req.logprobs = true;
  req.top_logprobs = 3;
  std::string text;
  std::string done_reason;
  size_t n_logprobs = 0;
  ASSERT_TRUE(r->complete(req, [&](const CompletionChunk& c) {
                 text += c.text;
                 for (const TokenLogprob& t : c.logprobs) {
                   EXPECT_EQ(t.top.size(), 3u);
                   EXPECT_LE(t.logprob, 0.0);
                   EXPECT_EQ(std::string(t.bytes.begin(), t.bytes.end()), t.token);
                   ++n_logprobs;
                 }
                 if (c.done) done_reason = c.done_reason;
                 return true;
               }).is_ok());
  EXPECT_EQ(text, full.substr(0, full.find(full.substr(8, 4))));
  EXPECT_EQ(done_reason, "stop");
  EXPECT_GT(n_logprobs, 0u);
}

TEST(InProcessRunner, OptionsMapToTheEngine) {
  CompletionRequest req;
  req.options.temperature = 0.5;
  req.options.top_k = 7;
  req.options.repeat_last_n = -1;
  req.options.seed = 99;
  req.options.num_predict = 3;
  req.options.num_keep = 2;
  req.options.stop = {"x"};
  req.format = "json";
  req.top_logprobs = 2;
  const auto p = to_completion_params(req);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_FLOAT_EQ(p->sampling.temperature, 0.5f);
  EXPECT_EQ(p->sampling.top_k, 7);
  EXPECT_EQ(p->sampling.repeat_last_n, -1);
  EXPECT_EQ(p->sampling.seed, 99);
  EXPECT_FLOAT_EQ(p->sampling.repeat_penalty, 1.0f);  // engine default when unset
  EXPECT_EQ(p->num_predict, 3);
  EXPECT_EQ(p->num_keep, 2);
  EXPECT_EQ(p->stop, std::vector<std::string>{"x"});
  EXPECT_EQ(p->format, "json");
  EXPECT_TRUE(p->sampling.logprobs);
  EXPECT_EQ(p->sampling.top_logprobs, 2);

  req.top_logprobs = 21;
  EXPECT_EQ(to_completion_params(req).status().code(), Code::kInvalidArgument);
  req.top_logprobs = 0;
  req.options.repeat_last_n = int64_t{1} << 40;
  EXPECT_EQ(to_completion_params(req).status().code(), Code::kInvalidArgument);
}

TEST(InProcessRunner, AGrammarConstrainsTheOutput) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto r = load_stories();
  ASSERT_TRUE(r);
  CompletionRequest req = greedy(40);
  req.grammar = R"(root ::= "<t>" [xyz]{3} "</t>")";
  std::string text;
  std::string done_reason;
  const Status st = r->complete(req, [&](const CompletionChunk& c) {
    text += c.text;
    if (c.done) done_reason = c.done_reason;
    return true;
  });
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_EQ(text.size(), 10u) << text;
  EXPECT_EQ(text.substr(0, 3), "<t>");
  EXPECT_EQ(text.find_first_not_of("xyz", 3), 6u) << text;
  EXPECT_EQ(text.substr(6), "</t>");
  EXPECT_EQ(done_reason, "stop");  // the grammar's end allows only the end-of-generation token

  req.format = "json";  // one constraint at a time
  EXPECT_EQ(r->complete(req, [](const CompletionChunk&) { return true; }).code(), Code::kInvalidArgument);
}

TEST(InProcessRunner, FactsTokenizeDetokenizeEmbed) {
  PADDOCK_REQUIRE_FIXTURES();
  const auto r = load_stories(64);
  ASSERT_TRUE(r);
  const ModelFacts f = r->facts();
  EXPECT_EQ(f.context_length, 64);
  EXPECT_GE(f.trained_context_length, 64);
  EXPECT_GT(f.memory_bytes, 0u);
  EXPECT_FALSE(f.has_vision);

  const auto ids = r->tokenize("Once upon a time");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<int32_t>{403, 407, 261, 378}));  // no BOS: the server counts prompts
  const auto text = r->detokenize(*ids);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, " Once upon a time");  // pieces joined, SentencePiece's leading space kept
  const std::vector<int32_t> bad = {1, 100000};
  EXPECT_EQ(r->detokenize(bad).status().code(), Code::kInvalidArgument);

  const auto e = r->embed({"hello", "Once upon a time"}, false);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[0].values.size(), 64u);  // n_embd
  EXPECT_EQ((*e)[1].prompt_tokens, 5);    // BOS + 4
  EXPECT_NE((*e)[0].values, (*e)[1].values);
  std::string long_text;
  for (int i = 0; i < 20; ++i) long_text += "Lily and Tom went to the park. ";
  const auto too_long = r->embed({long_text}, false);
  EXPECT_EQ(too_long.status().code(), Code::kInvalidArgument);
  const std::string& msg = too_long.status().message();  // names both lengths
  EXPECT_TRUE(msg.starts_with("the input length (")) << msg;
  EXPECT_TRUE(msg.ends_with(" tokens) exceeds the context length (64 tokens)")) << msg;
  const auto cut = r->embed({long_text}, true);
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  EXPECT_EQ((*cut)[0].prompt_tokens, 64);
  CompletionRequest req = greedy(2);
  req.images = {"\x89PNG"};
  EXPECT_EQ(r->complete(req, [](const CompletionChunk&) { return true; }).code(), Code::kUnsupported);
}

// With num_parallel 4, four concurrent greedy completions decode in shared batches and give
// what four sequential ones give.
TEST(InProcessRunner, ConcurrentCompletionsEqualSequentialOnes) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::vector<std::string> prompts = {"Once upon a time", "Lily and Tom went to the park.",
                                            "The little dog", "One day, a big red ball"};
  const auto request = [](const std::string& prompt) {
    CompletionRequest req = greedy(24);
    req.prompt = prompt;
    return req;
  };
  const auto seq_runner = load_stories(128);
  ASSERT_TRUE(seq_runner);
  std::vector<std::string> sequential(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(seq_runner
                    ->complete(request(prompts[i]),
                               [&](const CompletionChunk& c) {
                                 sequential[i] += c.text;
                                 return true;
                               })
                    .is_ok());
  }
  auto par =
      load_in_process(LoadOptions{.model_path = stories_path(), .num_ctx = 128, .num_parallel = 4}, kRef);
  ASSERT_TRUE(par.ok()) << par.status().to_string();
  std::vector<std::string> concurrent(prompts.size());
  std::vector<Status> status(prompts.size());
  std::vector<int64_t> prompt_counts(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i) {
    threads.emplace_back([&, i] {
      status[i] = (*par)->complete(request(prompts[i]), [&, i](const CompletionChunk& c) {
        concurrent[i] += c.text;
        if (c.done) prompt_counts[i] = c.prompt_eval_count;
        return true;
      });
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_TRUE(status[i].is_ok()) << status[i].to_string();
    EXPECT_EQ(concurrent[i], sequential[i]) << prompts[i];
    EXPECT_GT(prompt_counts[i], 0);
  }
  EXPECT_EQ((*par)->facts().memory_bytes - seq_runner->facts().memory_bytes,
            3 * (seq_runner->facts().memory_bytes - std::filesystem::file_size(stories_path())));

  // A follow-up of the same prompt takes the slot that holds it: one token evaluated, the
  // whole prompt counted.
  int64_t again = 0, cached = 0;
  ASSERT_TRUE((*par)
                  ->complete(request(prompts[2]),
                             [&](const CompletionChunk& c) {
                               if (c.done) {
                                 again = c.prompt_eval_count;
                                 cached = c.prompt_cached_count;
                               }
                               return true;
                             })
                  .is_ok());
  EXPECT_EQ(again, prompt_counts[2]);
  EXPECT_EQ(cached, prompt_counts[2] - 1);
}

TEST(InProcessRunner, LoadErrorsAreStatuses) {
  auto r = load_in_process(LoadOptions{.model_path = "/nonexistent/model.gguf"}, kRef);
  EXPECT_FALSE(r.ok());
  r = load_in_process(LoadOptions{.model_path = stories_path(), .adapter_paths = {"a.gguf"}}, kRef);
  EXPECT_EQ(r.status().code(), Code::kUnsupported);
  r = load_in_process(LoadOptions{.model_path = stories_path(), .num_parallel = 0}, kRef);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

#if PADDOCK_HAVE_VULKAN
// The text of n greedy tokens.
std::string greedy_text(Runner& r, int64_t n) {
  std::string joined;
  const Status st = r.complete(greedy(n), [&](const CompletionChunk& c) {
    joined += c.text;
    return true;
  });
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  return joined;
}

// num_gpu through the load options (the API's option and Modelfile parameter): every layer
// on the Vulkan device (lavapipe unless PADDOCK_VULKAN_DEVICE names another) generates the
// CPU's greedy text, and the facts report the bytes placed there (/api/ps size_vram); 0
// keeps everything on the CPU.
TEST(InProcessRunner, NumGpuOffloadsToTheVulkanDevice) {
  PADDOCK_REQUIRE_FIXTURES();
  setenv("PADDOCK_VULKAN_DEVICE", "llvmpipe", 0);
  auto cpu = load_in_process(LoadOptions{.model_path = stories_path(), .num_ctx = 64, .num_gpu = 0}, {});
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  EXPECT_EQ((*cpu)->facts().device_memory_bytes, 0u);
  auto gpu = load_in_process(LoadOptions{.model_path = stories_path(), .num_ctx = 64, .num_gpu = 999}, {});
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  const ModelFacts facts = (*gpu)->facts();
  EXPECT_GT(facts.device_memory_bytes, 0u);
  EXPECT_LE(facts.device_memory_bytes, facts.memory_bytes);
  const std::string want = greedy_text(**cpu, 12);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(greedy_text(**gpu, 12), want);
}

// Ollama's switches that keep the GPU out win over num_gpu (and a named device).
TEST(InProcessRunner, OllamaVulkanOffKeepsEverythingOnTheCpu) {
  PADDOCK_REQUIRE_FIXTURES();
  setenv("PADDOCK_VULKAN_DEVICE", "llvmpipe", 0);
  for (const char* setting : {"PADDOCK_VULKAN=0", "OLLAMA_LLM_LIBRARY=cpu_avx2"}) {
    const std::string name(setting, std::strchr(setting, '='));
    setenv(name.c_str(), std::strchr(setting, '=') + 1, 1);
    auto r = load_in_process(LoadOptions{.model_path = stories_path(), .num_ctx = 64, .num_gpu = 999}, {});
    unsetenv(name.c_str());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ((*r)->facts().device_memory_bytes, 0u) << setting;
    EXPECT_FALSE(greedy_text(**r, 4).empty());
  }
  auto on = load_in_process(LoadOptions{.model_path = stories_path(), .num_ctx = 64, .num_gpu = 999}, {});
  ASSERT_TRUE(on.ok()) << on.status().to_string();
  EXPECT_GT((*on)->facts().device_memory_bytes, 0u) << "back on once unset";
}

// A mixture-of-experts model offloads like a dense one (each of its layers ran on the CPU
// before the Vulkan backend had the MoE kernels): bytes on the device, the CPU's greedy text.
// (That layers with a type the device cannot run stay on the CPU is OffloadableLayers' test.)
TEST(InProcessRunner, MixtureOfExpertsOffloadsToTheVulkanDevice) {
  PADDOCK_REQUIRE_FIXTURES();
  setenv("PADDOCK_VULKAN_DEVICE", "llvmpipe", 0);
  const std::string path = testing::fixtures_dir() + "/models/tiny-qwen3moe-q4_k_m.gguf";
  auto cpu = load_in_process(LoadOptions{.model_path = path, .num_ctx = 64, .num_gpu = 0}, {});
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  auto gpu = load_in_process(LoadOptions{.model_path = path, .num_ctx = 64, .num_gpu = 999}, {});
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  const ModelFacts facts = (*gpu)->facts();
  EXPECT_GT(facts.device_memory_bytes, facts.memory_bytes / 2);  // every layer and the output
  EXPECT_LE(facts.device_memory_bytes, facts.memory_bytes);
  const std::string want = greedy_text(**cpu, 8);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(greedy_text(**gpu, 8), want);
}
#endif

}  // namespace
}  // namespace paddock::runner
