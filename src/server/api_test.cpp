#include <gtest/gtest.h>

#include <future>
#include <sstream>

#include "base/sha256.h"
#include "server/api.h"
#include "server/fake_runner_test.h"
#include "server/inference.h"

namespace paddock::server {
namespace {

using testing::FakeRunner;
using testing::FakeStore;
using testing::Script;

class ApiTest : public ::testing::Test {
 protected:
  ApiTest()
      : script_(std::make_shared<Script>()),
        api_(store_.open(), default_scheduler_effects(FakeRunner::factory(script_)), config()) {}

  static ApiConfig config() {
    ApiConfig c;
    c.origins = OriginPolicy({"https://allowed.example"});
    c.version = "9.9.9";
    return c;
  }

  HttpResponse call(const std::string& method, const std::string& path, const std::string& body = "",
                    Headers headers = {}) {
    HttpRequest r{.method = method, .path = path, .headers = std::move(headers), .body = body};
    return api_.handle(r);
  }
  // Runs a streamed response to the end; `limit` lines then the client "disconnects".
  static std::vector<Json> lines(const HttpResponse& r, size_t limit = 1000) {
    std::vector<Json> out;
    std::string buf;
    EXPECT_TRUE(r.stream) << r.body;
    if (!r.stream) return out;
    r.stream([&](std::string_view s) {
      buf.append(s);
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        out.push_back(Json::parse(buf.substr(0, nl)));
        buf.erase(0, nl + 1);
      }
      return out.size() < limit;
    });
    EXPECT_TRUE(buf.empty());
    return out;
  }
  static Json body(const HttpResponse& r) { return Json::parse(r.body); }

  FakeStore store_;
  std::shared_ptr<Script> script_;
  Api api_;
};

TEST_F(ApiTest, RootVersionAndUnknownRoutes) {
  EXPECT_EQ(call("GET", "/").body, "Ollama is running");
  EXPECT_EQ(call("HEAD", "/").status, 200);
  EXPECT_EQ(body(call("GET", "/api/version"))["version"], kOllamaApiVersion);
  EXPECT_EQ(body(call("GET", "/api/version"))["paddock_version"], "9.9.9");
  EXPECT_EQ(call("GET", "/nope").status, 404);
  EXPECT_EQ(call("GET", "/api/generate").status, 405);
  EXPECT_EQ(call("POST", "/api/tags").status, 405);
}

TEST_F(ApiTest, HostAndCors) {
  EXPECT_EQ(call("GET", "/", "", {{"Host", "evil.example:11434"}}).status, 403);
  EXPECT_EQ(call("GET", "/", "", {{"Host", "localhost:11434"}}).status, 200);
  auto r = call("GET", "/api/version", "", {{"Origin", "https://allowed.example"}});
  ASSERT_EQ(r.status, 200);
  ASSERT_FALSE(r.headers.empty());
  EXPECT_EQ(r.headers[0].second, "https://allowed.example");
  EXPECT_EQ(call("GET", "/api/version", "", {{"Origin", "https://other.example"}}).status, 403);
  auto pre = call("OPTIONS", "/api/chat", "", {{"Origin", "http://localhost:5173"}});
  EXPECT_EQ(pre.status, 204);
  bool has_methods = false;
  for (const auto& [k, v] : pre.headers) has_methods = has_methods || k == "Access-Control-Allow-Methods";
  EXPECT_TRUE(has_methods);
}

TEST_F(ApiTest, BodyErrors) {
  auto r = call("POST", "/api/generate", "");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "missing request body");
  EXPECT_EQ(call("POST", "/api/generate", "{nope").status, 400);
  EXPECT_EQ(call("POST", "/api/chat", R"({"model":"tiny","messages":{}})").status, 400);
  r = call("POST", "/api/generate", R"({"model":"missing","prompt":"x"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(body(r)["error"], "model 'missing' not found");
  EXPECT_EQ(call("POST", "/api/generate", R"({"model":"Bad Name!","prompt":"x"})").status, 400);
  EXPECT_EQ(call("POST", "/api/generate", R"({"prompt":"x"})").status, 400);
  EXPECT_EQ(script_->loads_count, 0);
}

// Each route words a model missing from the store as Ollama's does (server/routes.go; the
// /v1 routes re-wrap the native handler's message, middleware/openai.go and anthropic.go).
TEST_F(ApiTest, MissingModelMessagesAreOllamasPerRoute) {
  enum Shape { kNative, kOpenAi, kAnthropic };
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    Shape shape;
    const char* message;
  };
  const Case cases[] = {
      {"POST", "/api/generate", R"({"model":"nope","prompt":"x"})", kNative, "model 'nope' not found"},
      {"POST", "/api/chat", R"({"model":"nope","messages":[]})", kNative, "model 'nope' not found"},
      {"POST", "/api/show", R"({"model":"nope"})", kNative, "model 'nope' not found"},
      {"DELETE", "/api/delete", R"({"model":"nope"})", kNative, "model 'nope' not found"},
      {"POST", "/api/copy", R"({"source":"nope","destination":"x"})", kNative, "model \"nope\" not found"},
      {"POST", "/api/embed", R"({"model":"nope","input":"x"})", kNative,
       "model \"nope\" not found, try pulling it first"},
      {"POST", "/api/embeddings", R"({"model":"nope","prompt":"x"})", kNative,
       "model \"nope\" not found, try pulling it first"},
      {"POST", "/api/create", R"({"model":"m","from":"nope"})", kNative, "model \"nope\" not found"},
      {"GET", "/v1/models/nope", "", kOpenAi, "model 'nope' not found"},
      {"POST", "/v1/chat/completions", R"({"model":"nope","messages":[{"role":"user","content":"x"}]})",
       kOpenAi, "model 'nope' not found"},
      {"POST", "/v1/completions", R"({"model":"nope","prompt":"x"})", kOpenAi, "model 'nope' not found"},
      {"POST", "/v1/embeddings", R"({"model":"nope","input":"x"})", kOpenAi,
       "model \"nope\" not found, try pulling it first"},
      {"POST", "/v1/responses", R"({"model":"nope","input":"x"})", kOpenAi, "model 'nope' not found"},
      {"POST", "/v1/messages",
       R"({"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]})", kAnthropic,
       "model 'nope' not found"},
      {"POST", "/v1/messages/count_tokens", R"({"model":"nope","messages":[{"role":"user","content":"x"}]})",
       kAnthropic, "model 'nope' not found"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const HttpResponse r = call(c.method, c.path, c.body);
    EXPECT_EQ(r.status, 404);
    const Json j = body(r);
    if (c.shape == kNative) {
      EXPECT_EQ(j["error"], c.message);
    } else {
      EXPECT_EQ(j["error"]["message"], c.message);
      EXPECT_EQ(j["error"]["type"], "not_found_error");
      if (c.shape == kAnthropic) {
        EXPECT_EQ(j["type"], "error");
      }
    }
  }
  EXPECT_EQ(script_->loads_count, 0);
}

TEST_F(ApiTest, GenerateStreams) {
  auto r = call("POST", "/api/generate", R"({"model":"tiny","prompt":"hi","options":{"top_k":3}})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/x-ndjson");
  auto out = lines(r);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]["response"], "Hello");
  EXPECT_EQ(out[0]["done"], false);
  EXPECT_EQ(out[0]["model"], "tiny");
  EXPECT_TRUE(out[0]["created_at"].get<std::string>().ends_with("Z"));
  const Json& last = out.back();
  EXPECT_EQ(last["done"], true);
  EXPECT_EQ(last["done_reason"], "stop");
  EXPECT_EQ(last["eval_count"], 3);
  for (const char* k : {"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
                        "eval_duration", "context"}) {
    EXPECT_TRUE(last.contains(k)) << k;
  }
  ASSERT_EQ(script_->requests.size(), 1u);
  const auto& req = script_->requests[0];
  EXPECT_EQ(req.prompt, "<s>be nice</s><u>hi</u>");
  EXPECT_EQ(*req.options.top_k, 3);
  EXPECT_DOUBLE_EQ(*req.options.temperature, 0.5);  // from the model's params layer
  // The context holds prompt + response tokens (the fake tokenises bytes).
  EXPECT_EQ(last["context"].size(), req.prompt.size() + std::string("Hello, world").size());
}

TEST_F(ApiTest, GenerateNonStreamingRawSystemSuffixContext) {
  auto r = call("POST", "/api/generate", R"({"model":"tiny","prompt":"hi","stream":false,"raw":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.stream);
  const Json j = body(r);
  EXPECT_EQ(j["response"], "Hello, world");
  EXPECT_EQ(j["done"], true);
  EXPECT_FALSE(j.contains("context"));
  EXPECT_EQ(script_->requests.back().prompt, "hi");

  r = call("POST", "/api/generate",
           R"({"model":"tiny","prompt":"p","system":"S","suffix":"q","stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(script_->requests.back().prompt, "<s>S</s><u>p</u><x>q</x>");

  r = call("POST", "/api/generate", R"({"model":"tiny","prompt":"p","context":[65,66],"stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(script_->requests.back().prompt, "AB<s>be nice</s><u>p</u>");

  r = call("POST", "/api/generate", R"({"model":"thinker","prompt":"p","suffix":"q"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "registry.ollama.ai/library/thinker:latest does not support insert");

  r = call("POST", "/api/generate", R"({"model":"tiny","prompt":"p","images":["aGk="]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(body(r)["error"].get<std::string>().find("does not support images"), std::string::npos);

  r = call("POST", "/api/generate", R"({"model":"tiny","prompt":"p","think":true})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "\"tiny\" does not support thinking");
}

TEST_F(ApiTest, LoadUnloadAndPs) {
  auto r = call("POST", "/api/generate", R"({"model":"tiny"})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(body(r)["done_reason"], "load");
  auto ps = body(call("GET", "/api/ps"));
  ASSERT_EQ(ps["models"].size(), 1u);
  EXPECT_EQ(ps["models"][0]["name"], "tiny:latest");
  EXPECT_EQ(ps["models"][0]["size"], 1234);
  EXPECT_EQ(ps["models"][0]["context_length"], 2048);
  // Same model again: no second load.
  ASSERT_EQ(call("POST", "/api/generate", R"({"model":"tiny","prompt":"x","stream":false})").status, 200);
  EXPECT_EQ(script_->loads_count, 1);
  r = call("POST", "/api/chat", R"({"model":"tiny","messages":[],"keep_alive":0})");
  EXPECT_EQ(body(r)["done_reason"], "unload");
  EXPECT_TRUE(body(call("GET", "/api/ps"))["models"].empty());
  EXPECT_EQ(script_->destroyed, 1);
  // Another model replaces the loaded one.
  ASSERT_EQ(call("POST", "/api/generate", R"({"model":"tiny"})").status, 200);
  ASSERT_EQ(call("POST", "/api/generate", R"({"model":"thinker","keep_alive":-1})").status, 200);
  ps = body(call("GET", "/api/ps"));
  ASSERT_EQ(ps["models"].size(), 1u);
  EXPECT_EQ(ps["models"][0]["name"], "thinker:latest");
  EXPECT_TRUE(ps["models"][0]["expires_at"].get<std::string>().starts_with("2"));
}

TEST_F(ApiTest, UnloadAnswersAtOnceWhileEverySlotIsBusy) {
  for (const char* unload :
       {R"({"model":"tiny","keep_alive":0})", R"({"model":"tiny","messages":[],"keep_alive":0})"}) {
    const std::string route =
        std::string(unload).find("messages") == std::string::npos ? "/api/generate" : "/api/chat";
    // An unread streamed response holds the model's only parallel slot until it is dropped.
    HttpResponse busy = call("POST", "/api/generate", R"({"model":"tiny","prompt":"hi"})");
    ASSERT_TRUE(busy.stream);
    const int destroyed = script_->destroyed;
    auto answer = std::async(std::launch::async, [&] { return call("POST", route, unload); });
    const bool at_once = answer.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    EXPECT_TRUE(at_once) << route << " waited for the busy slot";
    EXPECT_EQ(script_->destroyed, destroyed);  // still serving the running request
    busy = HttpResponse{};                     // ... which ends: the model unloads
    EXPECT_EQ(body(answer.get())["done_reason"], "unload");
    EXPECT_EQ(script_->destroyed, destroyed + 1);
    EXPECT_TRUE(body(call("GET", "/api/ps"))["models"].empty());
  }
}

TEST_F(ApiTest, ClientDisconnectCancels) {
  script_->pieces = {"a", "b", "c", "d", "e"};
  auto r = call("POST", "/api/generate", R"({"model":"tiny","prompt":"hi"})");
  auto out = lines(r, 2);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_TRUE(script_->cancelled_seen);
}

TEST_F(ApiTest, NonStreamedRequestStopsWhenItsClientLeaves) {
  HttpRequest r{
      .method = "POST", .path = "/api/generate", .body = R"({"model":"tiny","prompt":"hi","stream":false})"};
  r.client_gone = [this] { return script_->loads_count > 0; };  // leaves once the model is loaded
  EXPECT_EQ(api_.handle(r).status, 499);
  EXPECT_TRUE(script_->cancelled_seen);
}

TEST_F(ApiTest, DrainCancelsRunningRequestsAndRefusesNewOnes) {
  ApiConfig c = config();
  c.scheduler.num_parallel = 2;  // two streams at once
  Api api(store_.open(), default_scheduler_effects(FakeRunner::factory(script_)), c);
  auto call = [&](const std::string& method, const std::string& path, const std::string& body) {
    return api.handle(HttpRequest{.method = method, .path = path, .body = body});
  };
  EXPECT_EQ(body(call("GET", "/health", ""))["status"], "ok");
  EXPECT_EQ(api.in_flight(), 0);
  HttpResponse native = call("POST", "/api/generate", R"({"model":"tiny","prompt":"hi"})");
  HttpResponse openai = call("POST", "/v1/chat/completions",
                             R"({"model":"tiny","stream":true,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(api.in_flight(), 2);  // until their streams are read and dropped

  api.begin_drain();
  EXPECT_EQ(call("GET", "/health", "").status, 503);
  EXPECT_EQ(call("GET", "/api/tags", "").status, 503);
  const HttpResponse refused = call("POST", "/v1/chat/completions", "{}");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(body(refused)["error"]["message"], "server is shutting down");
  // Running streams are cancelled and end with an error line in their own framing.
  const std::vector<Json> out = lines(native);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back()["error"], "server is shutting down");
  EXPECT_TRUE(script_->cancelled_seen);
  std::string sse;
  openai.stream([&](std::string_view s) {
    sse.append(s);
    return true;
  });
  const size_t error_at = sse.find(R"(data: {"error":{"message":"server is shutting down")");
  EXPECT_NE(error_at, std::string::npos) << sse;
  EXPECT_TRUE(sse.ends_with("data: [DONE]\n\n")) << sse;
  EXPECT_LT(error_at, sse.rfind("data: [DONE]")) << sse;
  native = HttpResponse{};
  openai = HttpResponse{};
  EXPECT_EQ(api.in_flight(), 0);
}

TEST_F(ApiTest, ThinkBudgetReachesTheRunnerWithTheTemplatesTags) {
  auto r = call(
      "POST", "/api/chat",
      R"({"model":"thinker","think":{"budget":7},"messages":[{"role":"user","content":"q"}],"stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto& budget = script_->requests.back().thinking_budget;
  ASSERT_TRUE(budget.has_value());
  EXPECT_EQ(budget->max_tokens, 7);
  EXPECT_EQ(budget->open, "<think>");
  EXPECT_EQ(budget->close, "</think>\n\n");
  EXPECT_FALSE(budget->starts_inside);  // the prompt ends with "<assistant>"

  r = HttpResponse{};  // releases the model, as sending the response does
  r = call("POST", "/api/generate",
           R"({"model":"thinker","think":{"budget":0},"prompt":"q","stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(script_->requests.back().thinking_budget.has_value());
  EXPECT_EQ(script_->requests.back().thinking_budget->max_tokens, 0);

  r = HttpResponse{};  // releases the model, as sending the response does
  r = call("POST", "/api/chat",
           R"({"model":"thinker","think":true,"messages":[{"role":"user","content":"q"}],"stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(script_->requests.back().thinking_budget.has_value());

  r = HttpResponse{};  // releases the model, as sending the response does
  r = call("POST", "/api/chat",
           R"({"model":"tiny","think":{"budget":7},"messages":[{"role":"user","content":"q"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "\"tiny\" does not support thinking");
  r = HttpResponse{};  // releases the model, as sending the response does
  r = call("POST", "/api/chat",
           R"({"model":"thinker","think":{"budget":-3},"messages":[{"role":"user","content":"q"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "invalid think budget: -3 (must be an integer of at least 0)");
}

TEST_F(ApiTest, FinalChunkNamesTheStopStringThatEndedTheOutput) {
  script_->stop_sequence = "\nQ:";
  auto r = call("POST", "/api/chat",
                R"({"model":"thinker","messages":[{"role":"user","content":"q"}],"stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["stop_sequence"], "\nQ:");
  r = HttpResponse{};  // releases the model, as sending the response does
  r = call("POST", "/api/generate", R"({"model":"tiny","prompt":"q"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(lines(r).back()["stop_sequence"], "\nQ:");
  r = HttpResponse{};
  script_->stop_sequence.clear();
  r = HttpResponse{};  // releases the model, as sending the response does
  r = call("POST", "/api/chat",
           R"({"model":"thinker","messages":[{"role":"user","content":"q"}],"stream":false})");
  EXPECT_FALSE(body(r).contains("stop_sequence"));
}

TEST_F(ApiTest, ChatThinkingAndTools) {
  script_->pieces = {"<think>", "hmm", "</think>", "Answer"};
  auto r = call("POST", "/api/chat",
                R"({"model":"thinker","messages":[{"role":"user","content":"q"}],"stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  Json j = body(r);
  EXPECT_EQ(j["message"]["role"], "assistant");
  EXPECT_EQ(j["message"]["thinking"], "hmm");
  EXPECT_EQ(j["message"]["content"], "Answer");
  EXPECT_EQ(script_->requests.back().prompt, "<user>q<assistant>");

  script_->pieces = {"<tool_call>", R"({"name":"get_weather","arguments":{"city":"Paris"}})", "</tool_call>"};
  const std::string req =
      R"({"model":"thinker","think":false,"messages":[{"role":"user","content":"w?"}],
          "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]})";
  r = call("POST", "/api/chat", req);
  ASSERT_EQ(r.status, 200) << r.body;
  auto out = lines(r);
  Json calls = Json::array();
  for (const Json& l : out) {
    if (l["message"].contains("tool_calls")) calls = l["message"]["tool_calls"];
  }
  ASSERT_EQ(calls.size(), 1u) << out.back().dump();
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(calls[0]["function"]["arguments"]["city"], "Paris");

  r = HttpResponse{};  // a finished response releases its model, as the HTTP layer does after sending
  r = call("POST", "/api/chat", R"({"model":"tiny","messages":[{"role":"user","content":"x"}],
          "tools":[{"type":"function","function":{"name":"f"}}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "registry.ollama.ai/library/tiny:latest does not support tools");
}

TEST_F(ApiTest, Embeddings) {
  auto r = call("POST", "/api/embed", R"({"model":"tiny","input":["a","b"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  Json j = body(r);
  ASSERT_EQ(j["embeddings"].size(), 2u);
  EXPECT_NEAR(j["embeddings"][0][0].get<double>(), 0.6, 1e-6);
  EXPECT_NEAR(j["embeddings"][0][1].get<double>(), 0.8, 1e-6);
  EXPECT_EQ(j["prompt_eval_count"], 4);
  j = body(call("POST", "/api/embed", R"({"model":"tiny","input":"a","dimensions":1})"));
  EXPECT_NEAR(j["embeddings"][0][0].get<double>(), 1.0, 1e-6);
  j = body(call("POST", "/api/embeddings", R"({"model":"tiny","prompt":"a"})"));
  EXPECT_EQ(j["embedding"][0], 3.0);  // legacy route: not normalised
  EXPECT_FALSE(normalize_embedding({1.0f, NAN}, 0).ok());
}

TEST_F(ApiTest, StoreRoutes) {
  Json tags = body(call("GET", "/api/tags"));
  ASSERT_EQ(tags["models"].size(), 2u);
  EXPECT_EQ(tags["models"][0]["details"]["family"], "llama");
  EXPECT_EQ(tags["models"][0]["digest"].get<std::string>().size(), 64u);

  auto r = call("POST", "/api/show", R"({"model":"tiny"})");
  ASSERT_EQ(r.status, 200) << r.body;
  Json show = body(r);
  EXPECT_EQ(show["system"], "be nice");
  EXPECT_TRUE(show["template"].get<std::string>().starts_with("{{ if .System }}"));
  EXPECT_EQ(show["capabilities"], Json::parse(R"(["completion", "insert"])"));
  // What the chat route accepts for "thinker" (tools and think) is what show reports.
  EXPECT_EQ(body(call("POST", "/api/show", R"({"model":"thinker"})"))["capabilities"],
            Json::parse(R"(["completion", "tools", "thinking"])"));
  EXPECT_EQ(call("POST", "/api/show", R"({"model":"nope"})").status, 404);
  EXPECT_EQ(body(call("POST", "/api/show", R"({})"))["error"], "model is required");

  EXPECT_EQ(call("POST", "/api/copy", R"({"source":"tiny","destination":"tiny2"})").status, 200);
  EXPECT_EQ(call("POST", "/api/copy", R"({"source":"nope","destination":"x"})").status, 404);
  EXPECT_EQ(body(call("GET", "/api/tags"))["models"].size(), 3u);
  EXPECT_EQ(call("DELETE", "/api/delete", R"({"model":"tiny2"})").status, 200);
  EXPECT_EQ(call("DELETE", "/api/delete", R"({"model":"tiny2"})").status, 404);

  const std::string digest = "sha256:" + std::string(64, '0');
  EXPECT_EQ(call("HEAD", "/api/blobs/" + digest).status, 404);
  EXPECT_EQ(call("HEAD", "/api/blobs/sha256:xyz").status, 400);
  r = call("POST", "/api/blobs/" + digest, "data");
  EXPECT_EQ(r.status, 400);  // digest mismatch
  EXPECT_NE(body(r)["error"].get<std::string>().find("mismatch"), std::string::npos);

  // Pull and push against a real registry are integration tests (clients.mjs); here the
  // request checks.
  EXPECT_EQ(body(call("POST", "/api/push", R"({"model":""})"))["error"], "model is required");
  EXPECT_EQ(call("POST", "/api/pull", R"({"model":"bad name!"})").status, 400);
  EXPECT_EQ(call("POST", "/api/pull", R"({"model":7})").status, 400);

  r = call("POST", "/api/create", R"({"model":"made","from":"tiny","system":"new system","stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["status"], "success");
  EXPECT_EQ(body(call("POST", "/api/show", R"({"model":"made"})"))["system"], "new system");
  EXPECT_EQ(call("POST", "/api/create", R"({"model":"made2"})").status, 400);
  EXPECT_EQ(call("POST", "/api/create", R"({"model":"m3","from":"/etc/passwd"})").status, 400);
}

TEST_F(ApiTest, OpenAiChat) {
  auto r =
      call("POST", "/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  Json j = body(r);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello, world");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_DOUBLE_EQ(*script_->requests.back().options.temperature, 1.0);  // OpenAI default
  EXPECT_FALSE(j["choices"][0].contains("logprobs"));

  r = call("POST", "/v1/chat/completions",
           R"({"model":"tiny","stream":true,"max_tokens":5,"stream_options":{"include_usage":true},
               "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/event-stream");
  std::string sse;
  r.stream([&](std::string_view s) {
    sse.append(s);
    return true;
  });
  EXPECT_TRUE(sse.starts_with("data: {"));
  EXPECT_TRUE(sse.ends_with("data: [DONE]\n\n"));
  EXPECT_NE(sse.find("\"role\":\"assistant\""), std::string::npos);
  EXPECT_NE(sse.find("\"finish_reason\":\"stop\""), std::string::npos);
  EXPECT_NE(sse.find("\"usage\""), std::string::npos);
  EXPECT_EQ(*script_->requests.back().options.num_predict, 5);

  r = call("POST", "/v1/chat/completions", R"({"model":"nope","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(body(r)["error"]["type"], "not_found_error");
  r = call("POST", "/v1/chat/completions", R"({"model":"tiny","messages":[]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["message"], "[] is too short - 'messages'");
  r = call(
      "POST", "/v1/chat/completions",
      R"({"model":"tiny","messages":[{"role":"user","content":[{"type":"image_url","image_url":"http://x/y.png"}]}]})");
  EXPECT_EQ(r.status, 400);
}

TEST_F(ApiTest, OpenAiUsageCountsTheWholePromptAndItsCachedPart) {
  script_->cached_tokens = 7;
  Json j = body(call("POST", "/v1/chat/completions",
                     R"({"model":"tiny","messages":[{"role":"user","content":"hi"}]})"));
  const auto prompt_size = static_cast<int64_t>(script_->requests.back().prompt.size());
  EXPECT_EQ(j["usage"]["prompt_tokens"], prompt_size);
  EXPECT_EQ(j["usage"]["total_tokens"], prompt_size + 3);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 7);
  j = body(call("POST", "/v1/completions", R"({"model":"tiny","prompt":"hi"})"));
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 7);
  // The native routes keep Ollama's fields only.
  j = body(call("POST", "/api/chat",
                R"({"model":"tiny","stream":false,"messages":[{"role":"user","content":"hi"}]})"));
  EXPECT_EQ(j["prompt_eval_count"], prompt_size);
  EXPECT_FALSE(j.contains("prompt_cached_count"));
}

// Reads an SSE body's events (without the final [DONE]).
std::vector<Json> sse_events(const HttpResponse& r) {
  std::string text;
  r.stream([&](std::string_view s) {
    text.append(s);
    return true;
  });
  std::vector<Json> out;
  for (size_t at = 0; (at = text.find("data: {", at)) != std::string::npos;) {
    const size_t end = text.find("\n\n", at);
    out.push_back(Json::parse(text.substr(at + 6, end - at - 6)));
    at = end;
  }
  return out;
}

TEST_F(ApiTest, OpenAiChatLogprobs) {
  Json j = body(call("POST", "/v1/chat/completions",
                     R"({"model":"tiny","logprobs":true,"top_logprobs":2,
                         "messages":[{"role":"user","content":"hi"}]})"));
  const Json& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 3u) << j.dump();
  EXPECT_EQ(content[0]["token"], "Hello");
  EXPECT_EQ(content[0]["logprob"], -0.5);
  EXPECT_EQ(content[0]["bytes"], Json::array({72, 101, 108, 108, 111}));
  ASSERT_EQ(content[0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(content[0]["top_logprobs"][1], Json::parse(R"({"token":"Hello~2","logprob":-2.0,
                                                         "bytes":[72,101,108,108,111,126,50]})"));

  const HttpResponse r = call("POST", "/v1/chat/completions",
                              R"({"model":"tiny","stream":true,"logprobs":true,
                                  "messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  std::string tokens;
  for (const Json& e : sse_events(r)) {
    const Json& choice = e["choices"][0];
    if (!choice.contains("logprobs")) continue;
    for (const Json& t : choice["logprobs"]["content"]) {
      EXPECT_EQ(t["top_logprobs"], Json::array());
      tokens += t["token"].get<std::string>();
    }
  }
  EXPECT_EQ(tokens, "Hello, world");
}

TEST_F(ApiTest, OpenAiCompletionsLogprobs) {
  Json j = body(call("POST", "/v1/completions", R"({"model":"tiny","prompt":"hi","logprobs":1})"));
  const Json& lp = j["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], Json::parse(R"(["Hello", ",", " world"])"));
  EXPECT_EQ(lp["token_logprobs"], Json::parse("[-0.5, -0.5, -0.5]"));
  EXPECT_EQ(lp["top_logprobs"][2], Json::parse(R"({" world~1": -1.0})"));
  EXPECT_EQ(lp["text_offset"], Json::parse("[0, 5, 6]"));

  // Streamed: each chunk carries its tokens; offsets continue across chunks.
  const HttpResponse r =
      call("POST", "/v1/completions", R"({"model":"tiny","prompt":"hi","logprobs":0,"stream":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  Json offsets = Json::array();
  for (const Json& e : sse_events(r)) {
    const Json& choice = e["choices"][0];
    if (choice.contains("logprobs")) {
      for (const Json& o : choice["logprobs"]["text_offset"]) offsets.push_back(o);
    }
  }
  EXPECT_EQ(offsets, Json::parse("[0, 5, 6]"));
}

TEST_F(ApiTest, OpenAiCompletionsEmbeddingsModels) {
  auto r = call("POST", "/v1/completions", R"({"model":"tiny","prompt":"hi"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["choices"][0]["text"], "Hello, world");
  EXPECT_EQ(script_->requests.back().prompt, "<s>be nice</s><u>hi</u>");
  EXPECT_EQ(call("POST", "/v1/completions", R"({"model":"tiny","prompt":["a"]})").status, 400);

  r = call("POST", "/v1/embeddings", R"({"model":"tiny","input":"a"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["data"][0]["object"], "embedding");
  r = call("POST", "/v1/embeddings", R"({"model":"tiny","input":"a","encoding_format":"base64"})");
  EXPECT_EQ(body(r)["data"][0]["embedding"], "mpkZP83MTD8AAAAA");  // 0.6f 0.8f 0.0f little-endian
  EXPECT_EQ(call("POST", "/v1/embeddings", R"({"model":"tiny","input":[]})").status, 400);

  Json models = body(call("GET", "/v1/models"));
  EXPECT_EQ(models["object"], "list");
  EXPECT_EQ(models["data"].size(), 2u);
  EXPECT_EQ(body(call("GET", "/v1/models/tiny:latest"))["owned_by"], "library");
  EXPECT_EQ(call("GET", "/v1/models/none").status, 404);
}

std::string deep(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST_F(ApiTest, DeepJsonIsA400OnEveryRoute) {
  const std::string d = deep(50000);
  const std::pair<std::string, std::string> native[] = {
      {"/api/generate", R"({"model":"tiny","prompt":"x","format":{"a":)" + d + "}}"},
      {"/api/generate", R"({"model":"tiny","keep_alive":)" + d + "}"},
      {"/api/chat", R"({"model":"tiny","messages":[],"format":{"a":)" + d + "}}"},
      {"/api/create", R"({"model":"m","from":"tiny","parameters":{"stop":)" + d + "}}"},
      {"/api/create", R"({"model":"m","from":"tiny","messages":)" + d + "}"},
      {"/api/embed", R"({"model":"tiny","input":)" + d + "}"},
      {"/api/show", R"({"model":)" + d + "}"},
  };
  for (const auto& [path, request] : native) {
    const HttpResponse r = call("POST", path, request);
    EXPECT_EQ(r.status, 400) << path;
    EXPECT_EQ(body(r)["error"], "invalid JSON: nested deeper than 512 levels") << path;
  }
  const std::string openai[] = {
      R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"stop":)" + d + "}",
      R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"tools":)" + d + "}",
      R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":)" +
          d + "}}}",
  };
  for (const std::string& request : openai) {
    const HttpResponse r = call("POST", "/v1/chat/completions", request);
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(body(r)["error"]["type"], "invalid_request_error");
  }
  // Deep JSON hidden in a string that gets parsed later: a tool call's arguments.
  const std::string args = R"({"a":)" + deep(50000) + "}";
  HttpResponse r = call(
      "POST", "/api/chat",
      R"({"model":"thinker","messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":")" +
          args + R"("}}]}]})");
  EXPECT_EQ(r.status, 400);
  r = call(
      "POST", "/v1/chat/completions",
      R"({"model":"thinker","messages":[{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":")" +
          args + R"("}}]}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(script_->loads_count, 0);
}

TEST_F(ApiTest, WrongJsonTypesAre400sInTheRoutesOwnShape) {
  const std::pair<std::string, std::string> openai[] = {
      {"/v1/chat/completions", R"({"model":"tiny","messages":[{"role":5,"content":"x"}]})"},
      {"/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":[{"type":7}]}]})"},
      {"/v1/chat/completions",
       R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":"yes"}})"},
      {"/v1/completions", R"({"model":"tiny","prompt":"x","stream_options":{"include_usage":1}})"},
      {"/v1/embeddings", R"({"model":"tiny","input":"a","encoding_format":5})"},
  };
  for (const auto& [path, request] : openai) {
    HttpResponse r;
    ASSERT_NO_THROW(r = call("POST", path, request)) << request;
    EXPECT_EQ(r.status, 400) << request;
    const Json j = body(r);
    EXPECT_EQ(j["error"]["type"], "invalid_request_error") << request;
    EXPECT_TRUE(j["error"]["message"].get<std::string>().starts_with("invalid request: type must be"))
        << j.dump();
    EXPECT_TRUE(r.headers.empty());
  }
}

TEST_F(ApiTest, ErrorsAreShortAndPrivate) {
  // A large invalid body is not echoed back.
  const HttpResponse big = call("POST", "/api/generate", "{\"model\":\"" + std::string(4 << 20, 'x'));
  EXPECT_EQ(big.status, 400);
  EXPECT_LT(big.body.size(), 1024u);
  const HttpResponse big_openai = call("POST", "/v1/chat/completions", std::string(4 << 20, '['));
  EXPECT_EQ(big_openai.status, 400);
  EXPECT_LT(big_openai.body.size(), 1024u);
  // A corrupt GGUF at create is the client's mistake, and the answer names no store path.
  const std::string gguf = std::string("GGUF\x03\x00\x00\x00", 8) + std::string(24, '\xff');
  const std::string digest = "sha256:" + sha256_hex(gguf);
  ASSERT_EQ(call("POST", "/api/blobs/" + digest, gguf).status, 201);
  const HttpResponse r = call("POST", "/api/create",
                              R"({"model":"broken","files":{"m.gguf":")" + digest + R"("},"stream":false})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.body.find(store_.root()), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("/blobs/"), std::string::npos) << r.body;
  // Streamed, the error line is as private.
  const auto out =
      lines(call("POST", "/api/create", R"({"model":"broken","files":{"m.gguf":")" + digest + R"("}})"));
  ASSERT_FALSE(out.empty());
  ASSERT_TRUE(out.back().contains("error"));
  EXPECT_EQ(out.back()["error"].get<std::string>().find(store_.root()), std::string::npos);
}

// The value of one sample of a /metrics body ("name{labels}"); -1 when it is absent.
double sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

TEST_F(ApiTest, MetricsCountRequestsByRoutePatternAndStatus) {
  ASSERT_EQ(call("GET", "/api/tags").status, 200);
  ASSERT_EQ(call("GET", "/api/tags").status, 200);
  ASSERT_EQ(call("GET", "/nope/x").status, 404);
  ASSERT_EQ(call("GET", "/api/generate").status, 405);
  ASSERT_EQ(call("GET", "/v1/models/tiny:latest").status, 200);
  ASSERT_EQ(call("GET", "/v1/models/none").status, 404);
  const HttpResponse r = call("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const std::string& m = r.body;
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/api/tags",status="200"})"), 2) << m;
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="other",status="404"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/api/generate",status="405"})"), 1);
  // The pattern, never the raw path.
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/v1/models/:model",status="200"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/v1/models/:model",status="404"})"), 1);
  EXPECT_EQ(m.find(R"(tiny:latest",status)"), std::string::npos);
  EXPECT_EQ(sample(m, R"(paddock_http_request_duration_seconds_count{route="/api/tags"})"), 2);
  EXPECT_EQ(sample(m, R"(paddock_http_request_duration_seconds_bucket{route="/api/tags",le="+Inf"})"), 2);
  EXPECT_EQ(sample(m, "paddock_scheduler_queue_depth"), 0);
  // The scrape before this one is counted too.
  EXPECT_EQ(
      sample(call("GET", "/metrics").body, R"(paddock_http_requests_total{route="/metrics",status="200"})"),
      1);
}

TEST_F(ApiTest, MetricsCountTokensOfEveryGeneratingRoute) {
  const HttpResponse g = call("POST", "/api/generate", R"({"model":"tiny","prompt":"hi","stream":false})");
  ASSERT_EQ(g.status, 200) << g.body;
  const int64_t prompt_tokens = body(g)["prompt_eval_count"], eval_count = body(g)["eval_count"];
  ASSERT_GT(eval_count, 0);
  std::string m = call("GET", "/metrics").body;
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/api/generate",status="200"})"), 1) << m;
  EXPECT_EQ(sample(m, R"(paddock_prompt_tokens_total{model="tiny:latest"})"), double(prompt_tokens));
  EXPECT_EQ(sample(m, R"(paddock_generated_tokens_total{model="tiny:latest"})"), double(eval_count));
  EXPECT_EQ(sample(m, R"(paddock_time_to_first_token_seconds_count{model="tiny:latest"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_generation_tokens_per_second_count{model="tiny:latest"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_model_loads_total{model="tiny:latest"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_model_loaded{model="tiny:latest"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_model_memory_bytes{model="tiny:latest"})"), 1234);  // the fake's facts

  // A stream is counted when it ends; OpenAI and Anthropic routes count their tokens once.
  {
    // The response holds its model slot until it is gone, as the server's does.
    const HttpResponse streamed =
        call("POST", "/api/chat", R"({"model":"tiny","messages":[{"role":"user","content":"a"}]})");
    m = call("GET", "/metrics").body;
    EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/api/chat",status="200"})"), -1);
    lines(streamed);
  }
  ASSERT_EQ(
      call("POST", "/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"a"}]})")
          .status,
      200);
  ASSERT_EQ(call("POST", "/v1/messages",
                 R"({"model":"tiny","max_tokens":9,"messages":[{"role":"user","content":"a"}]})")
                .status,
            200);
  m = call("GET", "/metrics").body;
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/api/chat",status="200"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/v1/chat/completions",status="200"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_http_requests_total{route="/v1/messages",status="200"})"), 1);
  EXPECT_EQ(sample(m, R"(paddock_generated_tokens_total{model="tiny:latest"})"), 4.0 * double(eval_count));
  EXPECT_EQ(sample(m, R"(paddock_time_to_first_token_seconds_count{model="tiny:latest"})"), 4);
}

TEST(ApiMetrics, AUseKeyMayReadMetrics) {
  FakeStore store;
  ApiConfig config;
  config.keys = ApiKeys::parse("use-key-0123456789abcdef").value();
  Api api(store.open(), default_scheduler_effects(FakeRunner::factory(std::make_shared<Script>())), config);
  EXPECT_EQ(api.handle(HttpRequest{.method = "GET", .path = "/metrics"}).status, 401);
  const HttpResponse r =
      api.handle(HttpRequest{.method = "GET",
                             .path = "/metrics",
                             .headers = {{"Authorization", "Bearer use-key-0123456789abcdef"}}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(sample(r.body, R"(paddock_http_requests_total{route="/metrics",status="401"})"), 1) << r.body;
}

// The value of a response header; "" when it is absent.
std::string header(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

// thinker renders "<role>content" per message, then "<assistant>"; the fake counts a byte as a
// token. This conversation is 9 + 16 + 21 + 8 + 11 = 65 tokens.
std::string long_chat(const std::string& extra) {
  return R"({"model":"thinker","stream":false,)" + extra + R"("messages":[
      {"role":"system","content":"S"},{"role":"user","content":"aaaaaaaaaa"},
      {"role":"assistant","content":"bbbbbbbbbb"},{"role":"user","content":"cc"}]})";
}

TEST_F(ApiTest, ChatLongerThanTheContextDropsWholeMessagesFromTheFront) {
  // 50 tokens: the first user message (16) goes, the assistant's answer still fits.
  HttpResponse r = call("POST", "/api/chat", long_chat(R"("options":{"num_ctx":50},)"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(script_->requests.back().prompt, "<system>S<assistant>bbbbbbbbbb<user>cc<assistant>");
  Json j = body(r);
  EXPECT_EQ(j["truncated"], true);
  EXPECT_EQ(j["prompt_tokens_dropped"], 16);
  EXPECT_EQ(j["prompt_eval_count"], 49);
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), "16");

  // 48: only the system message and the last one are kept; streamed, the header says so at once.
  r = HttpResponse{};
  r = call("POST", "/api/chat", long_chat(R"("stream":true,"options":{"num_ctx":48},)"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), "37");
  const std::vector<Json> out = lines(r);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(script_->requests.back().prompt, "<system>S<user>cc<assistant>");
  EXPECT_EQ(out.back()["prompt_tokens_dropped"], 37);
  EXPECT_FALSE(out.front().contains("truncated"));  // only the last line reports it

  // 20: even those do not fit; the runner cuts the rest, and both parts are counted.
  r = HttpResponse{};
  r = call("POST", "/api/chat", long_chat(R"("options":{"num_ctx":20},)"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(script_->requests.back().prompt, "<system>S<user>cc<assistant>");
  EXPECT_EQ(body(r)["prompt_tokens_dropped"], 37 + 8);
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), "45");

  // Three truncated generations, each counted once.
  const std::string m = call("GET", "/metrics").body;
  EXPECT_EQ(sample(m, R"(paddock_prompt_truncations_total{model="thinker:latest"})"), 3) << m;
}

TEST_F(ApiTest, ChatThatFitsIsUnchanged) {
  const HttpResponse r = call("POST", "/api/chat", long_chat(R"("options":{"num_ctx":65},)"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(script_->requests.back().prompt,
            "<system>S<user>aaaaaaaaaa<assistant>bbbbbbbbbb<user>cc<assistant>");
  const Json j = body(r);
  EXPECT_FALSE(j.contains("truncated"));
  EXPECT_FALSE(j.contains("prompt_tokens_dropped"));
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), "");
  const std::string m = call("GET", "/metrics").body;
  EXPECT_EQ(sample(m, R"(paddock_prompt_truncations_total{model="thinker:latest"})"), -1) << m;
}

TEST_F(ApiTest, TruncateFalseIsA400NamingBothLengths) {
  HttpResponse r = call("POST", "/api/chat", long_chat(R"("truncate":false,"options":{"num_ctx":50},)"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "the input length (65 tokens) exceeds the context length (50 tokens)");
  EXPECT_TRUE(script_->requests.empty());
  r = call("POST", "/api/chat", long_chat(R"("truncate":false,"options":{"num_ctx":65},)"));
  EXPECT_EQ(r.status, 200) << r.body;

  // tiny renders "<s>be nice</s><u>" + prompt + "</u>": 17 + 40 + 4 tokens.
  const std::string prompt(40, 'p');
  r = call("POST", "/api/generate",
           R"({"model":"tiny","stream":false,"truncate":false,"options":{"num_ctx":50},"prompt":")" + prompt +
               R"("})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"], "the input length (61 tokens) exceeds the context length (50 tokens)");
  // By default the runner cuts it and the answer says how much.
  r = call("POST", "/api/generate",
           R"({"model":"tiny","stream":false,"options":{"num_ctx":50},"prompt":")" + prompt + R"("})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["truncated"], true);
  EXPECT_EQ(body(r)["prompt_tokens_dropped"], 11);
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), "11");

  r = call("POST", "/api/chat", R"({"model":"tiny","truncate":"no","messages":[]})");
  EXPECT_EQ(r.status, 400);
}

TEST_F(ApiTest, TranslatedRoutesCarryTheTruncation) {
  // Over the default 2048 tokens, even without the first message: only the last one is kept.
  const std::string a(2100, 'a'), b(2100, 'b');
  const std::string messages = R"([{"role":"user","content":")" + a +
                               R"("},{"role":"assistant","content":")" + b +
                               R"("},{"role":"user","content":"cc"}])";
  HttpResponse r = call("POST", "/v1/chat/completions", R"({"model":"thinker","messages":)" + messages + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(script_->requests.back().prompt, "<user>cc<assistant>");
  Json j = body(r);
  const int64_t dropped = 6 + 2100 + 11 + 2100;
  EXPECT_EQ(j["truncated"], true);
  EXPECT_EQ(j["prompt_tokens_dropped"], dropped);
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), std::to_string(dropped));

  r = call("POST", "/v1/chat/completions",
           R"({"model":"thinker","stream":true,"messages":)" + messages + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), std::to_string(dropped));
  const std::vector<Json> events = sse_events(r);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["prompt_tokens_dropped"], dropped);
  EXPECT_FALSE(events.front().contains("truncated"));
  r = HttpResponse{};  // a finished stream releases its model, as the HTTP layer does

  r = call("POST", "/v1/messages", R"({"model":"thinker","max_tokens":9,"messages":)" + messages + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), std::to_string(dropped));
  r = call("POST", "/v1/responses", R"({"model":"thinker","input":)" + messages + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), std::to_string(dropped));

  // A conversation that fits has no header.
  r = call("POST", "/v1/chat/completions",
           R"({"model":"thinker","messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(header(r, "X-Paddock-Truncated"), "");
  EXPECT_FALSE(body(r).contains("truncated"));
}

}  // namespace
}  // namespace paddock::server
