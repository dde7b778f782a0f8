// A thinking budget end to end through the Api with the real in-process runner on the qwen3
// fixture (random weights): a template that opens the thinking section makes the model think
// from its first token, and `think: {"budget": N}` must bound what comes back as `thinking`.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runner/in_process_runner.h"
#include "server/api.h"
#include "server/fake_runner_test.h"  // FakeStore: a temp store
#include "store/manifest.h"
#include "tests/support/fixtures.h"

namespace paddock::server {
namespace {

// A qwen3 chat template (Go) whose generation prompt opens the thinking section.
constexpr const char* kTemplate =
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}"
    "{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n<think>\n";

Status add_qwen3(store::Store& s) {
  const std::string path = ::paddock::testing::fixtures_dir() + "/models/tiny-qwen3-q4_k_m.gguf";
  PADDOCK_ASSIGN(store::Digest model, s.import_blob_file(path));
  PADDOCK_ASSIGN(store::Digest tmpl, s.import_blob_bytes(kTemplate));
  store::ModelConfig c;
  c.model_format = "gguf";
  c.model_family = "qwen3";
  const std::string config_json = c.to_json();
  PADDOCK_ASSIGN(store::Digest config, s.import_blob_bytes(config_json));
  store::Manifest m;
  m.config = store::Layer{std::string(store::kMediaConfig), config, config_json.size(), "", ""};
  m.layers.push_back(
      store::Layer{std::string(store::kMediaModel), model, std::filesystem::file_size(path), "", ""});
  m.layers.push_back(
      store::Layer{std::string(store::kMediaTemplate), tmpl, std::string_view(kTemplate).size(), "", ""});
  PADDOCK_ASSIGN(store::Name name, store::Name::parse("qwen3-thinker"));
  return s.write_manifest(name, m);
}

TEST(ThinkingBudgetApi, ThinkingInTheResponseIsBoundedByTheBudget) {
  PADDOCK_REQUIRE_FIXTURES();
  testing::FakeStore fs;
  store::Store s = fs.open();
  const Status added = add_qwen3(s);
  ASSERT_TRUE(added.is_ok()) << added.message();
  Api api(fs.open(),
          default_scheduler_effects(runner::make_in_process_factory({.backend = engine::BackendKind::kRef})),
          ApiConfig{});

  constexpr size_t kBudget = 5;
  const HttpResponse r = api.handle(
      HttpRequest{.method = "POST",
                  .path = "/api/chat",
                  .body = R"({"model":"qwen3-thinker","stream":false,"think":{"budget":5},"logprobs":true,
                  "options":{"temperature":0,"num_predict":24,"num_ctx":256},
                  "messages":[{"role":"user","content":"hi"}]})"});
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = Json::parse(r.body);
  // One logprob per generated token: the model's kBudget thinking tokens, then the forced close.
  const Json& lps = j.at("logprobs");
  ASSERT_GT(lps.size(), kBudget) << r.body;
  std::string thought, after;
  for (size_t i = 0; i < lps.size(); ++i)
    (i < kBudget ? thought : after) += lps[i]["token"].get<std::string>();
  EXPECT_EQ(thought.find("</think>"), std::string::npos) << r.body;
  EXPECT_EQ(after.rfind("</think>\n\n", 0), 0u) << r.body;
  const std::string thinking = j["message"].value("thinking", "");
  EXPECT_FALSE(thinking.empty()) << r.body;
  EXPECT_NE(thought.find(thinking), std::string::npos) << "thinking longer than its budget: " << thinking;
  EXPECT_EQ(j["message"]["content"].get<std::string>().find("</think>"), std::string::npos);
  EXPECT_GT(j["eval_count"].get<int64_t>(), static_cast<int64_t>(kBudget) + 1);
}

}  // namespace
}  // namespace paddock::server
