// tool_choice obeyed end to end (issue #26): the real server (Api) over the in-process runner
// and stories260K, with a tagged template (Qwen's <tool_call> lines, the prompt ending inside
// <think>) and a bare-JSON one. For each template, 100 seeded runs per mode, spread over
// /api/chat (whole and streamed), /v1/chat/completions, /v1/messages and /v1/responses:
// "none" never yields a call; "required" (Anthropic's "any") always yields exactly one;
// a named tool is always that tool; every call's arguments validate against its schema.
// The runs differ by seed (native, OpenAI) and by prompt (all: Anthropic and Responses have
// no seed, the model's own seed parameter applies).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runner/in_process_runner.h"
#include "sample/test_json.h"
#include "server/api.h"
#include "server/scheduler.h"
#include "store/manifest.h"
#include "store/store.h"
#include "tests/support/fixtures.h"

namespace paddock::server {
namespace {

using sample_test::validate;

// Qwen's layout; the prompt opens the thinking block, so a forced call must close it first.
constexpr const char* kTaggedTemplate =
    "{{ if .Tools }}<|im_start|>system\n{{ range .Tools }}{{ .Function.Name }} {{ end }}<|im_end|>\n{{ end }}"
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}"
    "{{ .Content }}{{ if .ToolCalls }}<tool_call>\n{{ range .ToolCalls }}{{ json .Function }}\n{{ end }}"
    "</tool_call>{{ end }}<|im_end|>\n{{ end }}<|im_start|>assistant\n<think>\n";
constexpr const char* kBareTemplate =
    "{{ if .Tools }}<|im_start|>system\n{{ range .Tools }}{{ .Function.Name }} {{ end }}<|im_end|>\n{{ end }}"
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}{{ if .ToolCalls }}{{ range .ToolCalls }}"
    "{{ json .Function }}{{ end }}{{ end }}<|im_end|>\n{{ end }}<|im_start|>assistant\n";

// Short, bounded arguments (enums, integer ranges, strings with maxLength) keep runs short.
const Json kSchemas = Json::parse(R"({
  "get_weather": {"type": "object", "properties": {
      "city": {"type": "string", "maxLength": 10},
      "unit": {"enum": ["c", "f"]},
      "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city", "unit", "days"], "additionalProperties": false},
  "set_alarm": {"type": "object", "properties": {
      "hour": {"type": "integer", "minimum": 0, "maximum": 23},
      "label": {"type": "string", "maxLength": 6}},
    "required": ["hour"], "additionalProperties": false}
})");
// Enough for any call these schemas allow (about 120 tokens seen); free text ("none") is cut sooner.
constexpr int kNumPredict = 300;
constexpr int kNumPredictFreeText = 100;

struct Call {
  std::string name;
  Json arguments;
};

enum class Route { kNative, kNativeStream, kOpenAi, kAnthropic, kResponses };
constexpr int kRoutes = 5;
const char* route_name(Route r) {
  static const char* kNames[kRoutes] = {"/api/chat", "/api/chat (stream)", "/v1/chat/completions",
                                        "/v1/messages", "/v1/responses"};
  return kNames[static_cast<int>(r)];
}

class ToolChoiceGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!paddock::testing::fixtures_present()) return;
    static std::atomic<int> counter{0};
    root_ = (std::filesystem::temp_directory_path() /
             ("paddock-tool-choice-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
                .string();
    auto s = store::Store::open(root_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    add_model(*s, "stories-tagged", kTaggedTemplate);
    add_model(*s, "stories-bare", kBareTemplate);
    api_ = std::make_unique<Api>(std::move(s).value(),
                                 default_scheduler_effects(runner::make_in_process_factory()), ApiConfig{});
  }
  void TearDown() override {
    api_.reset();
    std::error_code ec;
    if (!root_.empty()) std::filesystem::remove_all(root_, ec);
  }

  static void add_model(store::Store& s, const char* name, const char* tmpl) {
    auto layer = [&](std::string_view media, std::string_view bytes) {
      auto d = s.import_blob_bytes(bytes);
      EXPECT_TRUE(d.ok()) << d.status().message();
      return store::Layer{std::string(media), d.ok() ? *d : store::Digest{}, bytes.size(), "", ""};
    };
    const std::string gguf = paddock::testing::fixtures_dir() + "/models/stories260K.gguf";
    auto model = s.import_blob_file(gguf);
    ASSERT_TRUE(model.ok()) << model.status().message();
    store::ModelConfig c;
    c.model_format = "gguf";
    c.model_family = "llama";
    store::Manifest m;
    m.config = layer(store::kMediaConfig, c.to_json());
    m.layers.push_back(
        store::Layer{std::string(store::kMediaModel), *model, std::filesystem::file_size(gguf), "", ""});
    m.layers.push_back(layer(store::kMediaTemplate, tmpl));
    // Anthropic's and OpenAI Responses' requests carry no seed: the model's applies.
    m.layers.push_back(layer(store::kMediaParams, R"({"seed": 7, "num_ctx": 512})"));
    auto n = store::Name::parse(name);
    ASSERT_TRUE(n.ok());
    const Status st = s.write_manifest(*n, m);
    ASSERT_TRUE(st.is_ok()) << st.message();
  }

  // One request in `route`'s dialect; `choice` is "none", "required" or a tool's name.
  HttpResponse ask(Route route, const std::string& model, const std::string& choice, int seed) {
    const int num_predict = choice == "none" ? kNumPredictFreeText : kNumPredict;
    const Json messages = Json::array(
        {Json{{"role", "user"}, {"content", "Run " + std::to_string(seed) + ": what should I do?"}}});
    Json body{{"model", model}};
    Json tools = Json::array();
    std::string path;
    switch (route) {
      case Route::kNative:
      case Route::kNativeStream:
      case Route::kOpenAi: {
        for (const auto& [name, schema] : kSchemas.items()) {
          tools.push_back(Json{{"type", "function"}, {"function", {{"name", name}, {"parameters", schema}}}});
        }
        body["messages"] = messages;
        body["tool_choice"] = choice == "none" || choice == "required"
                                  ? Json(choice)
                                  : Json{{"type", "function"}, {"function", {{"name", choice}}}};
        if (route == Route::kOpenAi) {
          path = "/v1/chat/completions";
          body["seed"] = seed;
          body["max_tokens"] = num_predict;
        } else {
          path = "/api/chat";
          body["stream"] = route == Route::kNativeStream;
          body["options"] = Json{{"seed", seed}, {"num_predict", num_predict}};
        }
        break;
      }
      case Route::kAnthropic: {
        for (const auto& [name, schema] : kSchemas.items()) {
          tools.push_back(Json{{"name", name}, {"input_schema", schema}});
        }
        path = "/v1/messages";
        body["messages"] = messages;
        body["max_tokens"] = num_predict;
        body["tool_choice"] = choice == "none"       ? Json{{"type", "none"}}
                              : choice == "required" ? Json{{"type", "any"}}
                                                     : Json{{"type", "tool"}, {"name", choice}};
        break;
      }
      case Route::kResponses: {
        for (const auto& [name, schema] : kSchemas.items()) {
          tools.push_back(Json{{"type", "function"}, {"name", name}, {"parameters", schema}});
        }
        path = "/v1/responses";
        body["input"] = messages[0]["content"];
        body["max_output_tokens"] = num_predict;
        body["tool_choice"] = choice == "none" || choice == "required"
                                  ? Json(choice)
                                  : Json{{"type", "function"}, {"name", choice}};
        break;
      }
    }
    body["tools"] = tools;
    return api_->handle(HttpRequest{.method = "POST", .path = path, .body = body.dump()});
  }

  // The calls an answer holds, read the way each API's clients read them.
  static std::vector<Call> calls_of(Route route, const HttpResponse& r) {
    std::vector<Call> calls;
    auto args = [](const Json& a) { return a.is_string() ? Json::parse(a.get<std::string>()) : a; };
    if (route == Route::kNativeStream) {
      std::string buf;
      EXPECT_TRUE(r.stream);
      if (!r.stream) return calls;
      r.stream([&](std::string_view s) {
        buf.append(s);
        return true;
      });
      size_t start = 0;
      for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
        const Json line = Json::parse(buf.substr(start, nl - start));
        for (const Json& c : line["message"].value("tool_calls", Json::array())) {
          calls.push_back({c["function"]["name"].get<std::string>(), c["function"]["arguments"]});
        }
      }
      return calls;
    }
    const Json b = Json::parse(r.body);
    switch (route) {
      case Route::kNative:
        for (const Json& c : b["message"].value("tool_calls", Json::array())) {
          calls.push_back({c["function"]["name"].get<std::string>(), c["function"]["arguments"]});
        }
        if (!calls.empty()) {
          EXPECT_EQ(b["message"]["content"], "");  // the call's markup is not content
        }
        break;
      case Route::kOpenAi:
        for (const Json& c : b["choices"][0]["message"].value("tool_calls", Json::array())) {
          calls.push_back({c["function"]["name"].get<std::string>(), args(c["function"]["arguments"])});
        }
        if (!calls.empty()) {
          EXPECT_EQ(b["choices"][0]["finish_reason"], "tool_calls");
        }
        break;
      case Route::kAnthropic:
        for (const Json& c : b["content"]) {
          if (c["type"] == "tool_use") calls.push_back({c["name"].get<std::string>(), c["input"]});
        }
        EXPECT_EQ(b["stop_reason"] == "tool_use", !calls.empty()) << b.dump();
        break;
      case Route::kResponses:
        for (const Json& c : b["output"]) {
          if (c["type"] == "function_call")
            calls.push_back({c["name"].get<std::string>(), args(c["arguments"])});
        }
        break;
      case Route::kNativeStream: break;
    }
    return calls;
  }

  // 100 runs of `choice` on `model`; each route in turn.
  void check_mode(const std::string& model, const std::string& choice) {
    for (int seed = 0; seed < 100; ++seed) {
      const auto route = static_cast<Route>(seed % kRoutes);
      SCOPED_TRACE(model + " " + choice + " seed " + std::to_string(seed) + " " + route_name(route));
      const HttpResponse r = ask(route, model, choice, seed);
      ASSERT_EQ(r.status, 200) << r.body;
      const std::vector<Call> calls = calls_of(route, r);
      if (choice == "none") {
        EXPECT_TRUE(calls.empty());
        continue;
      }
      ASSERT_EQ(calls.size(), 1u) << r.body;
      const Call& c = calls[0];
      ASSERT_TRUE(kSchemas.contains(c.name)) << c.name;
      if (choice != "required") {
        EXPECT_EQ(c.name, choice);
      }
      EXPECT_TRUE(validate(c.arguments, kSchemas[c.name], kSchemas[c.name])) << c.arguments.dump();
      ++calls_by_name_[c.name];
    }
  }

  std::string root_;
  std::unique_ptr<Api> api_;
  std::map<std::string, int> calls_by_name_;
};

TEST_F(ToolChoiceGolden, TaggedTemplate) {
  PADDOCK_REQUIRE_FIXTURES();
  for (const char* choice : {"none", "required", "set_alarm", "get_weather"})
    check_mode("stories-tagged", choice);
  // "required" let the model pick: both tools were picked at least once.
  EXPECT_GT(calls_by_name_["get_weather"], 100);
  EXPECT_GT(calls_by_name_["set_alarm"], 100);
}

TEST_F(ToolChoiceGolden, BareJsonTemplate) {
  PADDOCK_REQUIRE_FIXTURES();
  for (const char* choice : {"none", "required", "get_weather"}) check_mode("stories-bare", choice);
  EXPECT_GT(calls_by_name_["set_alarm"], 0);
  EXPECT_GT(calls_by_name_["get_weather"], 100);
}

}  // namespace
}  // namespace paddock::server
