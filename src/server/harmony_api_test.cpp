// gpt-oss through the API: the tiny gpt-oss GGUF's own Jinja template renders the prompt and a
// scripted runner answers in Harmony, its tags split across pieces as tokens would split them.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "server/api.h"
#include "server/fake_runner_test.h"
#include "store/manifest.h"
#include "tests/support/fixtures.h"

namespace paddock::server {
namespace {

using testing::FakeRunner;
using testing::FakeStore;
using testing::Script;

// Reasoning, a commentary preamble, then a call (its <|call|> ends generation, unseen).
// clang-format off
const std::vector<std::string> kToolCallOutput = {
    "<|channel|>", "analysis", "<|message|>", "Need the", " weather.", "<|end|>",
    "<|start|>",   "assistant", "<|channel|>", "commentary", "<|message|>", "Let me check.",
    "<|end|>",     "<|start|>", "assistant",   "<|channel|>", "commentary to=functions.get_weather ",
    "<|constrain|>", "json", "<|message|>", "{\"city\":", "\"Paris\"}"};
const std::vector<std::string> kAnswerOutput = {"<|channel|>analysis<|message|>", "Easy.", "<|end|>",
                                                "<|start|>assistant<|channel|>final<|message|>", "Sunny",
                                                " in Paris."};
// clang-format on

constexpr const char* kTools =
    R"([{"type":"function","function":{"name":"get_weather","description":"Weather for a city",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";

class HarmonyApiTest : public ::testing::Test {
 protected:
  HarmonyApiTest() : script_(std::make_shared<Script>()) {}

  void SetUp() override {
    PADDOCK_REQUIRE_FIXTURES();
    store::Store s = store_.open();
    // The model is the GGUF alone, as `paddock create` from the file makes it: its template is the GGUF's.
    const std::string path = paddock::testing::fixtures_dir() + "/models/tiny-gptoss-mxfp4.gguf";
    auto blob = s.import_blob_file(path);
    ASSERT_TRUE(blob.ok()) << blob.status().message();
    store::ModelConfig c;
    c.model_format = "gguf";
    c.model_family = "gptoss";
    const std::string config = c.to_json();
    auto config_blob = s.import_blob_bytes(config);
    ASSERT_TRUE(config_blob.ok());
    store::Manifest m;
    m.config = store::Layer{std::string(store::kMediaConfig), *config_blob, config.size(), "", ""};
    m.layers.push_back(
        store::Layer{std::string(store::kMediaModel), *blob, std::filesystem::file_size(path), "", ""});
    const Status written = s.write_manifest(*store::Name::parse("gpt-oss"), m);
    ASSERT_TRUE(written.is_ok()) << written.message();
    api_ = std::make_unique<Api>(store_.open(), default_scheduler_effects(FakeRunner::factory(script_)),
                                 ApiConfig{});
  }

  HttpResponse post(const std::string& path, const std::string& body) {
    return api_->handle(HttpRequest{.method = "POST", .path = path, .body = body});
  }
  // /api/chat with the weather tool; `more` follows the user's message, `extra` the messages.
  std::string chat_body(const std::string& think, bool stream, const std::string& more = "",
                        const std::string& extra = "") {
    return R"({"model":"gpt-oss","stream":)" + std::string(stream ? "true" : "false") + R"(,"think":)" +
           think + R"(,"tools":)" + kTools + R"(,"messages":[{"role":"user","content":"Weather in Paris?"})" +
           more + "]" + extra + "}";
  }
  std::string last_prompt() {
    std::lock_guard<std::mutex> lock(script_->mu);
    return script_->requests.empty() ? "" : script_->requests.back().prompt;
  }

  FakeStore store_;
  std::shared_ptr<Script> script_;
  std::unique_ptr<Api> api_;
};

TEST_F(HarmonyApiTest, ChatSplitsThinkingContentAndToolCalls) {
  script_->pieces = kToolCallOutput;
  const HttpResponse r = post("/api/chat", chat_body(R"("high")", false));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json msg = Json::parse(r.body)["message"];
  EXPECT_EQ(msg["thinking"], "Need the weather.");
  EXPECT_EQ(msg["content"], "Let me check.");
  ASSERT_EQ(msg["tool_calls"].size(), 1u) << r.body;
  const Json& fn = msg["tool_calls"][0]["function"];
  EXPECT_EQ(fn["name"], "get_weather");
  EXPECT_EQ(fn["arguments"], Json({{"city", "Paris"}}));
  EXPECT_EQ(fn["index"], 0);
  EXPECT_EQ(msg["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);

  const std::string prompt = last_prompt();
  EXPECT_NE(prompt.find("Reasoning: high\n"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("type get_weather = (_: {"), std::string::npos) << prompt;
  EXPECT_TRUE(prompt.ends_with("<|start|>assistant")) << prompt;
}

TEST_F(HarmonyApiTest, StreamedChatNeverShowsHarmonyTags) {
  script_->pieces = kToolCallOutput;
  const std::string out = testing::drain(post("/api/chat", chat_body(R"("high")", true)));
  std::string thinking, content;
  Json calls = Json::array();
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const Json j = Json::parse(line);
    thinking += j["message"].value("thinking", "");
    content += j["message"].value("content", "");
    for (const Json& c : j["message"].value("tool_calls", Json::array())) calls.push_back(c);
  }
  EXPECT_EQ(thinking, "Need the weather.");
  EXPECT_EQ(content, "Let me check.");
  ASSERT_EQ(calls.size(), 1u) << out;
  EXPECT_EQ(calls[0]["function"]["arguments"], Json({{"city", "Paris"}}));
}

TEST_F(HarmonyApiTest, OpenAIChatGivesReasoningAndToolCalls) {
  script_->pieces = kToolCallOutput;
  const HttpResponse r =
      post("/v1/chat/completions", R"({"model":"gpt-oss","reasoning_effort":"low","tools":)" +
                                       std::string(kTools) +
                                       R"(,"messages":[{"role":"user","content":"Paris?"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json choice = Json::parse(r.body)["choices"][0];
  EXPECT_EQ(choice["message"]["reasoning"], "Need the weather.");
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << r.body;
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(Json::parse(choice["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            Json({{"city", "Paris"}}));
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_NE(last_prompt().find("Reasoning: low\n"), std::string::npos);

  script_->pieces = kAnswerOutput;
  const std::string sse = testing::drain(
      post("/v1/chat/completions",
           R"({"model":"gpt-oss","stream":true,"messages":[{"role":"user","content":"Paris?"}]})"));
  std::string reasoning, content;
  for (size_t pos = 0; (pos = sse.find("data: {", pos)) != std::string::npos; ++pos) {
    const Json j = Json::parse(sse.substr(pos + 6, sse.find('\n', pos) - pos - 6));
    const Json& delta = j["choices"][0]["delta"];
    reasoning += delta.value("reasoning", "");
    content += delta.value("content", "");
  }
  EXPECT_EQ(reasoning, "Easy.");
  EXPECT_EQ(content, "Sunny in Paris.");
}

TEST_F(HarmonyApiTest, AnthropicAndResponsesGetTheSameSplit) {
  script_->pieces = kToolCallOutput;
  HttpResponse r = post("/v1/messages", R"({"model":"gpt-oss","max_tokens":64,
      "tools":[{"name":"get_weather","input_schema":{"type":"object"}}],
      "messages":[{"role":"user","content":"Paris?"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json m = Json::parse(r.body);
  ASSERT_EQ(m["content"].size(), 3u) << r.body;
  EXPECT_EQ(m["content"][0]["thinking"], "Need the weather.");
  EXPECT_EQ(m["content"][1]["text"], "Let me check.");
  EXPECT_EQ(m["content"][2]["input"], Json({{"city", "Paris"}}));
  EXPECT_EQ(m["stop_reason"], "tool_use");

  r = post("/v1/responses", R"({"model":"gpt-oss","reasoning":{"effort":"high"},"input":"Paris?","tools":[
      {"type":"function","name":"get_weather","parameters":{"type":"object"}}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json out = Json::parse(r.body)["output"];
  ASSERT_EQ(out.size(), 3u) << r.body;
  EXPECT_EQ(out[0]["type"], "reasoning");
  EXPECT_EQ(out[1]["content"][0]["text"], "Let me check.");
  EXPECT_EQ(out[2]["name"], "get_weather");
  EXPECT_NE(last_prompt().find("Reasoning: high\n"), std::string::npos);
}

TEST_F(HarmonyApiTest, GenerateSplitsThinkingFromTheResponse) {
  script_->pieces = kAnswerOutput;
  const HttpResponse r =
      post("/api/generate", R"({"model":"gpt-oss","prompt":"Paris?","think":"low","stream":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = Json::parse(r.body);
  EXPECT_EQ(j["thinking"], "Easy.");
  EXPECT_EQ(j["response"], "Sunny in Paris.");
  EXPECT_NE(last_prompt().find("Reasoning: low\n"), std::string::npos);
}

TEST_F(HarmonyApiTest, ThinkLevelsSetTheReasoningEffort) {
  script_->pieces = kAnswerOutput;
  const struct {
    const char* think;
    const char* effort;
  } cases[] = {{"true", "medium"}, {R"("low")", "low"}, {R"("max")", "high"}, {"false", "medium"}};
  for (const auto& c : cases) {
    const HttpResponse r = post("/api/chat", chat_body(c.think, false));
    ASSERT_EQ(r.status, 200) << c.think << ": " << r.body;
    EXPECT_NE(last_prompt().find(std::string("Reasoning: ") + c.effort + "\n"), std::string::npos) << c.think;
    // think:false cannot turn Harmony's reasoning off; it still comes back apart from the answer.
    const Json msg = Json::parse(r.body)["message"];
    EXPECT_EQ(msg["thinking"], "Easy.") << c.think;
    EXPECT_EQ(msg["content"], "Sunny in Paris.") << c.think;
  }
}

TEST_F(HarmonyApiTest, HistoryReachesTheTemplate) {
  script_->pieces = kAnswerOutput;
  const HttpResponse r =
      post("/api/chat", chat_body("true", false, R"(,{"role":"assistant","thinking":"Need the weather.",
        "tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},
        {"role":"tool","tool_name":"get_weather","content":"sunny"})"));
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string prompt = last_prompt();
  EXPECT_NE(prompt.find(
                "<|start|>assistant<|channel|>analysis<|message|>Need the weather.<|end|>"
                "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
                "{\"city\": \"Paris\"}<|call|>"
                "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>\"sunny\"<|end|>"
                "<|start|>assistant"),
            std::string::npos)
      << prompt;
}

TEST_F(HarmonyApiTest, ForcedToolChoiceIsRefused) {
  const HttpResponse r = post("/api/chat", chat_body("true", false, "", R"(,"tool_choice":"required")"));
  EXPECT_EQ(r.status, 400) << r.body;
}

}  // namespace
}  // namespace paddock::server
