// Constrained-decoding overhead: per-token time of the sampler (sample + accept) with the
// real Llama 3 vocabulary (128256 tokens) on random logits, unconstrained vs format "json"
// vs a JSON schema, next to the ~28 ms/token decode of the synthetic llama3.2-1b on this
// machine class (issue 7 asks the grammar to add under 10% of that). Random logits are the
// hard case for a lazy grammar: the best candidates are rarely allowed, so the sampler
// often falls back to one trie walk over the vocabulary. Logits are generated before timing;
// times are the thread's CPU time, so other processes on a shared machine do not inflate them.
//   grammar_bench [FIXTURES_DIR] [DECODE_MS_PER_TOKEN]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "sample/gbnf.h"
#include "sample/json_schema.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace paddock;

constexpr int kTokens = 2000;       // timed tokens per configuration
constexpr int kMaxPerWalk = 200;    // a walk restarts (fresh sampler) after this or at EOG
constexpr int kLogitPool = 32;      // distinct random logit vectors, cycled
constexpr double kDecodeMs = 28.0;  // synthetic llama3.2-1b decode, ms/token (paddock bench)

constexpr const char* kSchema = R"({"type":"object","properties":{
  "name":{"type":"string","maxLength":20},"age":{"type":"integer","minimum":0,"maximum":120},
  "tags":{"type":"array","items":{"type":"string","maxLength":10},"maxItems":5},
  "address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","maxLength":5}},
             "required":["city"]}},"required":["name","age"]})";

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double ms_per_token = 0;
  int walks = 0;
};

Timing run(const std::vector<std::vector<float>>& pool, int32_t n_vocab,
           const std::optional<sample::GrammarConstraint>& grammar, int64_t seed) {
  sample::SamplerParams params;  // Ollama's defaults: temperature 0.8, top_k 40, top_p 0.9
  params.seed = seed;
  Timing r;
  double seconds = 0;
  int done = 0;
  while (done < kTokens) {
    auto s = sample::Sampler::create(params, n_vocab, grammar);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().to_string().c_str());
      std::exit(1);
    }
    ++r.walks;
    for (int i = 0; i < kMaxPerWalk && done < kTokens; ++i, ++done) {
      const std::vector<float>& logits = pool[static_cast<size_t>(done % kLogitPool)];
      const double t0 = thread_seconds();
      auto tok = s->sample(logits);
      const bool ok = tok.ok() && s->accept(*tok).is_ok();
      seconds += thread_seconds() - t0;
      if (!ok) {
        std::fprintf(stderr, "sampling failed: %s\n", tok.ok() ? "accept" : tok.status().to_string().c_str());
        std::exit(1);
      }
      if (grammar && grammar->vocab->is_eog(*tok)) break;
    }
  }
  r.ms_per_token = seconds * 1000.0 / kTokens;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("PADDOCK_FIXTURES");
  const std::string dir = std::string(argc > 1 ? argv[1] : (env && *env ? env : "../shared/fixtures"));
  const double decode_ms = argc > 2 ? std::atof(argv[2]) : kDecodeMs;
  auto f = gguf::File::open(dir + "/tokenizer/vocab-llama3.gguf");
  if (!f.ok()) {
    std::fprintf(stderr, "%s\n", f.status().to_string().c_str());
    return 1;
  }
  auto tok = Tokenizer::load(**f);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.status().to_string().c_str());
    return 1;
  }
  // As the engine builds it (LoadedModel::grammar_vocab); built once per model, not timed.
  const int32_t n_vocab = (*tok)->n_vocab();
  std::vector<std::string> pieces(static_cast<size_t>(n_vocab));
  std::vector<int32_t> eog;
  for (int32_t id = 0; id < n_vocab; ++id) {
    pieces[static_cast<size_t>(id)] = (*tok)->piece(id, false);
    if ((*tok)->is_eog(id)) eog.push_back(id);
  }
  const auto t_vocab = std::chrono::steady_clock::now();
  auto vocab = std::make_shared<const sample::GrammarVocab>(std::move(pieces), eog);
  const double vocab_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_vocab).count();

  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<std::vector<float>> pool(kLogitPool, std::vector<float>(static_cast<size_t>(n_vocab)));
  for (auto& logits : pool)
    for (float& l : logits) l = normal(rng);

  const auto grammar_for = [&](const Result<std::string>& gbnf) {
    if (!gbnf.ok()) {
      std::fprintf(stderr, "%s\n", gbnf.status().to_string().c_str());
      std::exit(1);
    }
    auto g = sample::parse_gbnf(*gbnf);
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", g.status().to_string().c_str());
      std::exit(1);
    }
    return std::optional<sample::GrammarConstraint>(sample::GrammarConstraint{*g, vocab});
  };

  std::printf("vocabulary: Llama 3, %d tokens (grammar vocabulary built once in %.0f ms)\n", n_vocab,
              vocab_ms);
  std::printf("%d tokens per configuration, random logits, Ollama's default sampling options\n\n", kTokens);
  const Timing base = run(pool, n_vocab, std::nullopt, 1);
  std::printf("%-14s %8.3f ms/token\n", "unconstrained", base.ms_per_token);
  const struct {
    const char* name;
    Result<std::string> gbnf;
  } configs[] = {{"format json", sample::format_to_gbnf(R"("json")")},
                 {"json schema", sample::json_schema_to_gbnf(std::string_view(kSchema))}};
  for (const auto& c : configs) {
    const Timing r = run(pool, n_vocab, grammar_for(c.gbnf), 1);
    const double extra = r.ms_per_token - base.ms_per_token;
    std::printf("%-14s %8.3f ms/token  (+%.3f ms = %.1f%% of a %.0f ms decode step; %d walks)\n", c.name,
                r.ms_per_token, extra, 100.0 * extra / decode_ms, decode_ms, r.walks);
  }
  return 0;
}
