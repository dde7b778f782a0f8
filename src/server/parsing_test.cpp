#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "base/json_depth.h"
#include "server/api_util.h"

#include "server/cors.h"
#include "server/duration.h"
#include "server/host.h"
#include "server/options.h"
#include "server/requests.h"

namespace paddock::server {
namespace {

using namespace std::chrono_literals;

TEST(Duration, GoForms) {
  EXPECT_EQ(*parse_go_duration("5m"), Duration(5min));
  EXPECT_EQ(*parse_go_duration("1h30m"), Duration(90min));
  EXPECT_EQ(*parse_go_duration("300ms"), Duration(300ms));
  EXPECT_EQ(*parse_go_duration("1.5s"), Duration(1500ms));
  EXPECT_EQ(*parse_go_duration("-1m"), Duration(-1min));
  EXPECT_EQ(*parse_go_duration("0"), Duration(0));
  for (const char* bad : {"", "m", "5", "5x", "1.s.", "--1m"})
    EXPECT_FALSE(parse_go_duration(bad).ok()) << bad;
}

TEST(Duration, KeepAliveForms) {
  EXPECT_FALSE(parse_keep_alive(nlohmann::json())->has_value());
  EXPECT_EQ(**parse_keep_alive(nlohmann::json(30)), Duration(30s));
  EXPECT_EQ(**parse_keep_alive(nlohmann::json(0)), Duration(0));
  EXPECT_EQ(**parse_keep_alive(nlohmann::json(-1)), kForever);
  EXPECT_EQ(**parse_keep_alive(nlohmann::json("-1m")), kForever);
  EXPECT_EQ(**parse_keep_alive(nlohmann::json("10m")), Duration(10min));
  EXPECT_EQ(**parse_keep_alive(nlohmann::json("3600")), Duration(1h));
  EXPECT_EQ(**parse_keep_alive(nlohmann::json("99999999999999999999999")), kForever);
  EXPECT_FALSE(parse_keep_alive(nlohmann::json("soon")).ok());
  EXPECT_FALSE(parse_keep_alive(nlohmann::json::array()).ok());
}

TEST(Host, OllamaRules) {
  EXPECT_EQ(parse_host("").to_string(), "127.0.0.1:11434");
  EXPECT_EQ(parse_host("0.0.0.0").to_string(), "0.0.0.0:11434");
  EXPECT_EQ(parse_host("1.2.3.4:8080").to_string(), "1.2.3.4:8080");
  EXPECT_EQ(parse_host(":9000").to_string(), "127.0.0.1:9000");
  EXPECT_EQ(parse_host("http://example.com").to_string(), "example.com:80");
  EXPECT_EQ(parse_host("https://example.com").to_string(), "example.com:443");
  EXPECT_EQ(parse_host("http://example.com:7/path").to_string(), "example.com:7");
  EXPECT_EQ(parse_host("[::1]:8080").to_string(), "[::1]:8080");
  EXPECT_EQ(parse_host("[::1]").to_string(), "[::1]:11434");
  EXPECT_EQ(parse_host("\"localhost:99999\"").to_string(), "localhost:11434");
}

TEST(Cors, DefaultsAndExtras) {
  const OriginPolicy p({"chrome-extension://*", "https://my.app"});
  for (const char* ok :
       {"http://localhost", "http://localhost:3000", "https://127.0.0.1:8443", "app://x", "file://",
        "tauri://localhost", "vscode-webview://abc", "chrome-extension://id", "https://my.app"}) {
    EXPECT_TRUE(p.allows(ok)) << ok;
  }
  for (const char* bad : {"http://evil.com", "https://localhost.evil.com", "http://localhostx"}) {
    EXPECT_FALSE(p.allows(bad)) << bad;
  }
  EXPECT_TRUE(OriginPolicy({"*"}).allows("http://anything.example"));
}

TEST(Cors, HostCheck) {
  EXPECT_TRUE(host_allowed("localhost:11434", "127.0.0.1"));
  EXPECT_TRUE(host_allowed("127.0.0.1:11434", "127.0.0.1"));
  EXPECT_TRUE(host_allowed("192.168.1.5", "127.0.0.1"));
  EXPECT_TRUE(host_allowed("[::1]:11434", "127.0.0.1"));
  EXPECT_TRUE(host_allowed("box.local", "127.0.0.1"));
  EXPECT_FALSE(host_allowed("evil.com", "127.0.0.1"));
  EXPECT_FALSE(host_allowed("8.8.8.8:11434", "127.0.0.1"));
  EXPECT_TRUE(host_allowed("evil.com", "0.0.0.0"));
}

TEST(Requests, BodyErrors) {
  EXPECT_EQ(parse_body("").status().message(), "missing request body");
  EXPECT_EQ(parse_body("{").status().code(), Code::kInvalidArgument);
  auto j = parse_body(R"({"model":"m","prompt":5})");
  ASSERT_TRUE(j.ok());
  auto g = parse_generate(*j);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find(".prompt of type string"), std::string::npos) << g.status().message();
  EXPECT_FALSE(parse_generate(Json::array()).ok());
}

TEST(Requests, GenerateDefaultsAndFields) {
  auto g = parse_generate(Json::parse(R"({"model":"m","prompt":"hi"})"));
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->stream);
  EXPECT_FALSE(g->raw);
  EXPECT_FALSE(g->keep_alive.has_value());
  EXPECT_FALSE(g->think.set);
  g = parse_generate(Json::parse(
      R"({"model":"m","stream":false,"keep_alive":"1m","think":"high","context":[1,2],"format":"json","top_logprobs":3})"));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_FALSE(g->stream);
  EXPECT_EQ(*g->keep_alive, Duration(1min));
  EXPECT_EQ(g->think.level, "high");
  EXPECT_EQ(g->context, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(g->format, "json");
  EXPECT_EQ(g->top_logprobs, 3);
}

TEST(Requests, ThinkBudgetTurnsThinkingOnWithALimit) {
  auto c = parse_chat(Json::parse(R"({"model":"m","think":{"budget":64}})"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->think.set);
  EXPECT_TRUE(c->think.enabled);
  EXPECT_EQ(c->think.budget, 64);
  c = parse_chat(Json::parse(R"({"model":"m","think":{"budget":0}})"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->think.budget, 0);
  c = parse_chat(Json::parse(R"({"model":"m","think":"high"})"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->think.budget, -1);

  const std::pair<const char*, const char*> cases[] = {
      {R"({"think":{"budget":-1}})", "invalid think budget: -1 (must be an integer of at least 0)"},
      {R"({"think":{"budget":1.5}})", "invalid think budget: 1.5"},
      {R"({"think":{"budget":"10"}})", "invalid think budget"},
      {R"({"think":{"budget":18446744073709551615}})", "invalid think budget"},
      {R"({"think":{"budget":5,"level":"high"}})", "unknown key \"level\""},
      {R"({"think":{}})", "found no budget"},
  };
  for (const auto& [body, want] : cases) {
    auto g = parse_generate(Json::parse(body));
    ASSERT_FALSE(g.ok()) << body;
    EXPECT_NE(g.status().message().find(want), std::string::npos) << body << " -> " << g.status().message();
  }
}

TEST(Requests, GenerateErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"raw":true,"system":"x"})", "raw mode does not support template, system, or context"},
      {R"({"top_logprobs":21})", "top_logprobs must be between 0 and 20"},
      {R"({"think":"very"})", "invalid think value"},
      {R"({"format":"xml"})", "invalid format"},
      {R"({"format":5})", "invalid format"},
      {R"({"keep_alive":"soon"})", "invalid duration"},
      {R"({"context":["a"]})", "context"},
      {R"({"options":[1]})", "options"},
  };
  for (const auto& [body, want] : cases) {
    auto g = parse_generate(Json::parse(body));
    ASSERT_FALSE(g.ok()) << body;
    EXPECT_NE(g.status().message().find(want), std::string::npos) << body << " -> " << g.status().message();
  }
}

TEST(Requests, ChatEmbedCreate) {
  auto c = parse_chat(Json::parse(R"({"model":"m","messages":[{"role":"USER","content":"hi"}],"tools":[]})"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->messages.size(), 1u);
  EXPECT_EQ(c->messages[0].role, "user");
  EXPECT_FALSE(parse_chat(Json::parse(R"({"messages":"hi"})")).ok());

  auto e = parse_embed(Json::parse(R"({"model":"m","input":["a","b"],"dimensions":2,"truncate":false})"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->inputs.size(), 2u);
  EXPECT_FALSE(e->truncate);
  EXPECT_EQ(parse_embed(Json::parse(R"({"input":5})")).status().message(), "invalid input type");
  EXPECT_TRUE(parse_embed(Json::parse(R"({"input":""})"))->inputs.empty());

  auto cr = parse_create(Json::parse(R"({"name":"x","files":{"a.gguf":"sha256:00"},"license":"MIT"})"));
  ASSERT_TRUE(cr.ok());
  EXPECT_EQ(cr->model, "x");
  EXPECT_EQ(cr->license, std::vector<std::string>{"MIT"});
  EXPECT_FALSE(parse_create(Json::parse(R"({"files":{"a":1}})")).ok());
}

TEST(Options, MergeAndTypes) {
  store::Params model;
  ASSERT_TRUE(model.set("temperature", "0.5").is_ok());
  ASSERT_TRUE(model.set("num_ctx", "512").is_ok());
  auto o =
      effective_options(model, Json::parse(R"({"top_k":7,"stop":["x"],"unknown_key":1,"num_predict":3.0})"));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_DOUBLE_EQ(*o->sampling.temperature, 0.5);
  EXPECT_EQ(*o->sampling.top_k, 7);
  EXPECT_EQ(*o->sampling.num_predict, 3);
  EXPECT_EQ(o->sampling.stop, std::vector<std::string>{"x"});
  EXPECT_EQ(o->num_ctx, 512);
  o = effective_options(model, Json::parse(R"({"temperature":0})"));
  EXPECT_DOUBLE_EQ(*o->sampling.temperature, 0.0);
  EXPECT_EQ(effective_options(model, Json::parse(R"({"top_k":"many"})")).status().message(),
            "option \"top_k\" must be of type integer");
}

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(Requests, DeepJsonIsRefusedBeforeParsing) {
  // The outer object is a level of its own.
  EXPECT_TRUE(parse_body("{\"format\":" + nested(kMaxJsonDepth - 1) + "}").ok());
  for (const size_t depth : {kMaxJsonDepth, size_t{50000}}) {
    const auto j = parse_body("{\"format\":" + nested(depth) + "}");
    ASSERT_FALSE(j.ok()) << depth;
    EXPECT_EQ(j.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(j.status().message(), "invalid JSON: nested deeper than 512 levels");
  }
}

TEST(Requests, ParseErrorsDoNotQuoteTheBody) {
  const std::string huge = "{\"model\":\"" + std::string(1 << 20, 'x');  // never closed
  const auto j = parse_body(huge);
  ASSERT_FALSE(j.ok());
  EXPECT_LT(j.status().message().size(), 200u) << j.status().message().substr(0, 300);
  EXPECT_EQ(j.status().message().find("xxxx"), std::string::npos);
  for (const std::string& number : {std::string("[1e400]"), "[" + std::string(100000, '6') + "e99999]"}) {
    const auto n = parse_body(number);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.status().message(), "invalid JSON: a number is out of range");
  }
  // Syntax errors read as Ollama's (Go's encoding/json) do.
  EXPECT_EQ(parse_body(R"({"a" 1})").status().message(), "invalid character '1' after object key");
  EXPECT_EQ(parse_body(R"({bad})").status().message(),
            "invalid character 'b' looking for beginning of object key string");
  EXPECT_EQ(parse_body(R"({"model":)").status().message(), "unexpected end of JSON input");
  // What only the C++ parser refuses keeps its own short message.
  const auto utf8 = parse_body("{\"a\":\"\xff\"}");
  ASSERT_FALSE(utf8.ok());
  EXPECT_TRUE(utf8.status().message().starts_with("invalid JSON: parse error at line 1, column "))
      << utf8.status().message();
}

TEST(Requests, ErrorsQuoteOnlyAnExcerpt) {
  Json big = Json::array();
  for (int i = 0; i < 10000; ++i) big.push_back(i);
  auto g = parse_generate(Json{{"format", big}});
  ASSERT_FALSE(g.ok());
  EXPECT_LT(g.status().message().size(), 200u);
  EXPECT_NE(g.status().message().find("invalid format: [0,1,2,"), std::string::npos) << g.status().message();
  EXPECT_EQ(json_excerpt(Json("short")), "\"short\"");
}

TEST(ApiUtil, PublicMessagesHaveNoPathsAndAreShort) {
  EXPECT_EQ(public_message("/home/u/.ollama/models/blobs/sha256-ab: unexpected end of file"),
            "sha256-ab: unexpected end of file");
  EXPECT_EQ(public_message("open \"/tmp/paddock-x/models/\" failed (/var/lib/x.gguf)"),
            "open \"models\" failed (x.gguf)");
  EXPECT_EQ(public_message("pull http://host/v2/x failed for library/llama"),
            "pull http://host/v2/x failed for library/llama");
  const std::string long_message = public_message(std::string(5000, 'e'));
  EXPECT_EQ(long_message.size(), kMaxErrorBytes);
  EXPECT_TRUE(long_message.ends_with("..."));
  // Cut at a character boundary: 'é' is two bytes.
  const std::string accents = public_message(std::string(1, 'a') + [] {
    std::string s;
    for (int i = 0; i < 400; ++i) s += "é";
    return s;
  }());
  EXPECT_TRUE(accents.ends_with("é...")) << accents.substr(accents.size() - 8);
}

TEST(Options, ResourceOptionsAreClamped) {
  const auto opts = [](const char* json) {
    auto o = effective_options(store::Params(), Json::parse(json));
    EXPECT_TRUE(o.ok()) << json;
    return std::move(o).value();
  };
  const int64_t cpus = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(*opts(R"({"num_thread":2147483647})").num_thread, cpus);
  EXPECT_EQ(*opts(R"({"num_thread":1})").num_thread, 1);
  EXPECT_FALSE(opts(R"({"num_thread":-5})").num_thread.has_value());  // automatic
  EXPECT_FALSE(opts(R"({"num_thread":0})").num_thread.has_value());
  EXPECT_EQ(opts(R"({"num_ctx":1})").num_ctx, 4);   // Ollama's minimum
  EXPECT_EQ(opts(R"({"num_ctx":-1})").num_ctx, 0);  // the model's default
  EXPECT_EQ(opts(R"({"num_ctx":1099511627776})").num_ctx, kMaxNumCtx);
  EXPECT_EQ(*opts(R"({"num_ctx":512,"num_batch":1099511627776})").num_batch, 512);
  EXPECT_EQ(*opts(R"({"num_batch":1099511627776})").num_batch, kMaxNumCtx);
  EXPECT_FALSE(opts(R"({"num_batch":-3})").num_batch.has_value());
  EXPECT_EQ(*opts(R"({"num_gpu":-7})").num_gpu, -1);  // automatic
  EXPECT_EQ(*opts(R"({"num_gpu":0})").num_gpu, 0);
  EXPECT_EQ(*opts(R"({"num_gpu":1099511627776})").num_gpu, kMaxNumGpu);
  EXPECT_EQ(*opts(R"({"num_keep":-9})").sampling.num_keep, -1);  // the whole prompt
  EXPECT_EQ(*opts(R"({"num_ctx":512,"num_keep":1099511627776})").sampling.num_keep, 511);
  EXPECT_EQ(*opts(R"({"top_k":-3})").sampling.top_k, 0);  // off
  EXPECT_EQ(*opts(R"({"top_k":40})").sampling.top_k, 40);
  EXPECT_EQ(*opts(R"({"top_k":1099511627776})").sampling.top_k, kMaxTopK);
  // A model's PARAMETERs are clamped the same way.
  store::Params model;
  ASSERT_TRUE(model.set("num_thread", "100000").is_ok());
  EXPECT_EQ(*effective_options(model, Json::object())->num_thread, cpus);
}

TEST(Options, OneShortWarningForUnknownKeys) {
  Json request = Json::object();
  request["x\ntime=2026-01-01T00:00:00 level=ERROR msg=\"forged\""] = 1;
  for (int i = 0; i < 1000; ++i) request["unknown_" + std::to_string(i) + std::string(1000, 'k')] = i;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(effective_options(store::Params(), request).ok());
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_LT(log.size(), 1024u);
  EXPECT_NE(log.find("invalid options provided: "), std::string::npos) << log;
  EXPECT_NE(log.find("and 996 more"), std::string::npos) << log;
}

}  // namespace
}  // namespace paddock::server
