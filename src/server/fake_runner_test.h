// Test doubles for the server: a scripted Runner (fixed output pieces, recorded requests,
// optional per-piece hook; one byte is one token, and a prompt longer than the context is
// reported cut as the engine cuts it), a temp model store holding one tiny model, and
// drain() and parse_named_sse() to read a streamed response.
//   FakeStore fs; Api api(fs.open(), FakeRunner::factory(script), {});
#pragma once

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runner/runner.h"
#include "server/http_types.h"
#include "server/requests.h"
#include "store/store.h"

namespace paddock::server::testing {

struct Script {
  std::vector<std::string> pieces{"Hello", ",", " world"};
  std::string done_reason = "stop";
  std::string stop_sequence;                        // reported as the stop string that ended the output
  int64_t cached_tokens = 0;                        // reported as the prompt's part reused from the KV cache
  std::vector<runner::CompletionRequest> requests;  // every request seen
  std::vector<runner::LoadOptions> loads;
  int loads_count = 0, destroyed = 0;
  bool cancelled_seen = false;
  std::mutex mu;
};

class FakeRunner : public runner::Runner {
 public:
  FakeRunner(std::shared_ptr<Script> s, int64_t num_ctx)
      : s_(std::move(s)), num_ctx_(num_ctx > 0 ? num_ctx : 2048) {}
  ~FakeRunner() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    ++s_->destroyed;
  }
  runner::ModelFacts facts() const override { return {.context_length = num_ctx_, .memory_bytes = 1234}; }
  Status complete(const runner::CompletionRequest& r, const runner::ChunkFn& on_chunk) override {
    {
      std::lock_guard<std::mutex> lock(s_->mu);
      s_->requests.push_back(r);
    }
    if (r.is_cancelled && r.is_cancelled()) {
      s_->cancelled_seen = true;
      return error(Code::kCancelled, "cancelled");
    }
    for (const std::string& p : s_->pieces) {
      runner::CompletionChunk c;
      c.text = p;
      if (r.logprobs) c.logprobs.push_back(logprob(p, r.top_logprobs));
      if (!on_chunk(c)) {
        s_->cancelled_seen = true;
        return error(Code::kCancelled, "cancelled");
      }
    }
    runner::CompletionChunk last;
    last.done = true;
    last.done_reason = s_->done_reason;
    last.stop_sequence = s_->stop_sequence;
    last.prompt_eval_count = std::min(static_cast<int64_t>(r.prompt.size()), num_ctx_);
    last.truncated_tokens = static_cast<int64_t>(r.prompt.size()) - last.prompt_eval_count;
    last.prompt_cached_count = s_->cached_tokens;
    last.eval_count = static_cast<int64_t>(s_->pieces.size());
    last.eval_duration_ns = 1000;
    if (!on_chunk(last)) s_->cancelled_seen = true;
    return Status::ok();
  }
  Result<std::vector<runner::Embedding>> embed(const std::vector<std::string>& texts, bool) override {
    std::vector<runner::Embedding> out;
    for (const std::string& t : texts) out.push_back({{3.0f, 4.0f, static_cast<float>(t.size() * 0)}, 2});
    return out;
  }
  Result<std::vector<int32_t>> tokenize(std::string_view text) override {
    std::vector<int32_t> ids;
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  }
  Result<std::string> detokenize(std::span<const int32_t> tokens) override {
    std::string s;
    for (int32_t t : tokens) s += static_cast<char>(t);
    return s;
  }

  static runner::RunnerFactory factory(std::shared_ptr<Script> s) {
    return [s](const runner::LoadOptions& o) -> Result<std::unique_ptr<runner::Runner>> {
      {
        std::lock_guard<std::mutex> lock(s->mu);
        s->loads.push_back(o);
        ++s->loads_count;
      }
      return std::unique_ptr<runner::Runner>(new FakeRunner(s, o.num_ctx));
    };
  }

 private:
  // The piece itself at -0.5, then `top` alternatives "<piece>~1".. at -1, -2, ...
  static runner::TokenLogprob logprob(const std::string& piece, int top) {
    runner::TokenLogprob lp{.token = piece, .logprob = -0.5, .bytes = {piece.begin(), piece.end()}};
    for (int i = 1; i <= top; ++i) {
      const std::string alt = piece + "~" + std::to_string(i);
      lp.top.push_back({.token = alt, .logprob = -1.0 * i, .bytes = {alt.begin(), alt.end()}});
    }
    return lp;
  }

  std::shared_ptr<Script> s_;
  int64_t num_ctx_;
};

// A temp store with "tiny:latest" (Go template, SYSTEM, params) and "thinker:latest"
// (a template with thinking and tools).
class FakeStore {
 public:
  FakeStore();
  ~FakeStore();
  store::Store open() const;
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// Everything a streamed response writes, read to its end.
inline std::string drain(const HttpResponse& r) {
  std::string out;
  EXPECT_TRUE(r.stream) << r.body;
  if (r.stream) {
    r.stream([&](std::string_view s) {
      out.append(s);
      return true;
    });
  }
  return out;
}

// "event: NAME\ndata: {...}\n\n" records, in order, as (NAME, data); each data's "type" is
// its NAME.
inline std::vector<std::pair<std::string, Json>> parse_named_sse(const std::string& s) {
  std::vector<std::pair<std::string, Json>> out;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t end = s.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << s.substr(pos);
    if (end == std::string::npos) break;
    const std::string rec = s.substr(pos, end - pos);
    pos = end + 2;
    const size_t nl = rec.find('\n');
    EXPECT_EQ(rec.rfind("event: ", 0), 0u) << rec;
    EXPECT_EQ(rec.substr(nl + 1, 6), "data: ") << rec;
    out.emplace_back(rec.substr(7, nl - 7), Json::parse(rec.substr(nl + 7)));
    EXPECT_EQ(out.back().first, out.back().second["type"]) << rec;
  }
  return out;
}

}  // namespace paddock::server::testing
