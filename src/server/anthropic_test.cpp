#include "server/anthropic.h"

#include <gtest/gtest.h>

#include "server/api.h"
#include "server/api_util.h"
#include "server/fake_runner_test.h"

namespace paddock::server {
namespace {

using testing::FakeRunner;
using testing::FakeStore;
using testing::Script;

Json native_of(const std::string& body, bool count_only = false) {
  auto r = anthropic::to_native_chat(Json::parse(body), count_only);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Json();
}

std::string error_of(const std::string& body, bool count_only = false) {
  auto r = anthropic::to_native_chat(Json::parse(body), count_only);
  EXPECT_FALSE(r.ok()) << body;
  return r.ok() ? "" : r.status().message();
}

TEST(AnthropicRequest, OptionsSystemAndToolRoundTrip) {
  const Json n = native_of(R"({
    "model": "m", "max_tokens": 64, "temperature": 0.2, "top_p": 0.9, "top_k": 7,
    "stop_sequences": ["END"], "metadata": {"user_id": "u"}, "stream": true,
    "system": [{"type": "text", "text": "be brief"}, {"type": "text", "text": "be kind"}],
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "tools": [{"name": "get_weather", "description": "weather", "input_schema": {"type": "object"}}],
    "tool_choice": {"type": "tool", "name": "get_weather"},
    "messages": [
      {"role": "user", "content": "weather in Paris?"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "look it up", "signature": "x"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
        {"type": "text", "text": "and tomorrow?"}]}
    ]})");
  EXPECT_EQ(n["model"], "m");
  EXPECT_EQ(n["stream"], true);
  EXPECT_EQ(n["think"], Json::parse(R"({"budget":2048})"));
  EXPECT_EQ(n["options"],
            Json::parse(R"({"num_predict":64,"temperature":0.2,"top_p":0.9,"top_k":7,"stop":["END"]})"));
  EXPECT_EQ(n["tools"][0], Json::parse(R"({"type":"function","function":{"name":"get_weather",
            "description":"weather","parameters":{"type":"object"}}})"));
  EXPECT_EQ(n["tool_choice"], Json::parse(R"({"type":"function","function":{"name":"get_weather"}})"));
  const Json& m = n["messages"];
  ASSERT_EQ(m.size(), 5u) << m.dump();
  EXPECT_EQ(m[0], Json::parse(R"({"role":"system","content":"be brief\nbe kind"})"));
  EXPECT_EQ(m[1], Json::parse(R"({"role":"user","content":"weather in Paris?"})"));
  EXPECT_EQ(m[2], Json::parse(R"({"role":"assistant","content":"Checking.","thinking":"look it up",
            "tool_calls":[{"id":"toolu_1","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]})"));
  EXPECT_EQ(
      m[3],
      Json::parse(R"({"role":"tool","content":"sunny","tool_call_id":"toolu_1","tool_name":"get_weather"})"));
  EXPECT_EQ(m[4], Json::parse(R"({"role":"user","content":"and tomorrow?"})"));
}

TEST(AnthropicRequest, ToolChoiceAndThinkingForms) {
  const std::string head = R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],)";
  EXPECT_EQ(native_of(head + R"("tool_choice":{"type":"auto"}})")["tool_choice"], "auto");
  EXPECT_EQ(native_of(head + R"("tool_choice":{"type":"any"}})")["tool_choice"], "required");
  EXPECT_EQ(native_of(head + R"("tool_choice":{"type":"none"}})")["tool_choice"], "none");
  EXPECT_EQ(native_of(head + R"("thinking":{"type":"disabled"}})")["think"], false);
  // Below Anthropic's floor of 1024 and above max_tokens: accepted, as Ollama does.
  EXPECT_EQ(native_of(head + R"("thinking":{"type":"enabled","budget_tokens":16}})")["think"],
            Json::parse(R"({"budget":16})"));
  EXPECT_EQ(
      parse_chat(native_of(head + R"("thinking":{"type":"enabled","budget_tokens":16}})"))->think.budget, 16);
  EXPECT_FALSE(native_of(head + R"("stream":false})")["stream"].get<bool>());
  EXPECT_EQ(native_of(R"({"model":"m","messages":[{"role":"user","content":"x"}]})", true)["options"],
            Json::object());
}

TEST(AnthropicRequest, ClientErrorsNameTheField) {
  const std::string msgs = R"("messages":[{"role":"user","content":"x"}])";
  EXPECT_EQ(error_of(R"({"model":"m",)" + msgs + "}"), "max_tokens: Field required");
  EXPECT_EQ(error_of(R"({"max_tokens":5,)" + msgs + "}"), "model: Field required");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":0,)" + msgs + "}"),
            "max_tokens: expected an integer of at least 1");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5})"), "messages: Field required");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5,"messages":[]})"),
            "messages: expected a non-empty array");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]})"),
            "messages.0.role: must be \"user\" or \"assistant\", not \"system\"");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
              {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]})"),
            "messages.0.content.0: image content is not supported yet: send text");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
              {"type":"tool_use","id":"a","name":"f","input":{}}]}]})"),
            "messages.0.content.0: unsupported content block type \"tool_use\" in a user message");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5,)" + msgs + R"(,"tool_choice":{"type":"some"}})"),
            "tool_choice.type: must be \"auto\", \"any\", \"tool\" or \"none\", not \"some\"");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5,)" + msgs + R"(,"thinking":{"type":"enabled"}})"),
            "thinking.budget_tokens: expected a positive integer");
  EXPECT_EQ(
      error_of(R"({"model":"m","max_tokens":5,)" + msgs +
               R"(,"tools":[{"type":"web_search_20250305","name":"w"}]})"),
      "tools.0.type: only custom tools (with an input_schema) are supported, not \"web_search_20250305\"");
  EXPECT_EQ(error_of(R"({"model":"m","max_tokens":5,)" + msgs + R"(,"stop_sequences":"x"})"),
            "stop_sequences: expected an array of strings");
  EXPECT_EQ(error_of(R"([1])"), "invalid request body: expected a JSON object");
}

TEST(AnthropicResponse, MessageFromNative) {
  const Json native = Json::parse(R"({"message":{"role":"assistant","content":"Hi","thinking":"hm",
      "tool_calls":[{"id":"call_abc","function":{"index":0,"name":"f","arguments":{"a":1}}}]},
      "done":true,"done_reason":"stop","prompt_eval_count":1,"eval_count":5})");
  const Json m = anthropic::message_from_native(native, "msg_1", "m", 12);
  EXPECT_EQ(m, Json::parse(R"({"id":"msg_1","type":"message","role":"assistant","model":"m","content":[
      {"type":"thinking","thinking":"hm","signature":""},{"type":"text","text":"Hi"},
      {"type":"tool_use","id":"toolu_abc","name":"f","input":{"a":1}}],
      "stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":5}})"));
  Json cut = native;
  cut["done_reason"] = "length";
  EXPECT_EQ(anthropic::message_from_native(cut, "msg_1", "m", 12)["stop_reason"], "max_tokens");
  cut["message"].erase("tool_calls");
  cut["done_reason"] = "stop";
  EXPECT_EQ(anthropic::message_from_native(cut, "msg_1", "m", 12)["stop_reason"], "end_turn");
  cut["stop_sequence"] = "END";
  const Json stopped = anthropic::message_from_native(cut, "msg_1", "m", 12);
  EXPECT_EQ(stopped["stop_reason"], "stop_sequence");
  EXPECT_EQ(stopped["stop_sequence"], "END");
}

std::vector<std::string> names(const std::vector<std::pair<std::string, Json>>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    std::string n = e.first;
    if (e.second.contains("delta") && e.second["delta"].contains("type"))
      n += ":" + e.second["delta"]["type"].get<std::string>();
    if (e.second.contains("content_block")) n += ":" + e.second["content_block"]["type"].get<std::string>();
    out.push_back(n);
  }
  return out;
}

TEST(AnthropicResponse, EventStreamBlocks) {
  anthropic::EventStream s("msg_1", "m", 3);
  std::string all = s.start();
  all += s.chunk(Json::parse(R"({"message":{"role":"assistant","content":"","thinking":"a"},"done":false})"));
  all += s.chunk(Json::parse(R"({"message":{"role":"assistant","content":"","thinking":"b"},"done":false})"));
  all += s.chunk(Json::parse(R"({"message":{"role":"assistant","content":"Hi"},"done":false})"));
  all += s.chunk(Json::parse(R"({"message":{"role":"assistant","content":"",
      "tool_calls":[{"id":"call_x","function":{"index":0,"name":"f","arguments":{"a":1}}}]},"done":false})"));
  all += s.chunk(Json::parse(R"({"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop",
      "prompt_eval_count":3,"eval_count":4})"));
  const auto events = testing::parse_named_sse(all);
  EXPECT_EQ(
      names(events),
      (std::vector<std::string>{
          "message_start", "ping", "content_block_start:thinking", "content_block_delta:thinking_delta",
          "content_block_delta:thinking_delta", "content_block_stop", "content_block_start:text",
          "content_block_delta:text_delta", "content_block_stop", "content_block_start:tool_use",
          "content_block_delta:input_json_delta", "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(events[0].second["message"]["id"], "msg_1");
  EXPECT_EQ(events[0].second["message"]["usage"]["input_tokens"], 3);
  EXPECT_EQ(events[3].second["index"], 0);
  EXPECT_EQ(events[7].second["delta"]["text"], "Hi");
  EXPECT_EQ(events[7].second["index"], 1);
  EXPECT_EQ(events[9].second["content_block"]["id"], "toolu_x");
  EXPECT_EQ(events[9].second["content_block"]["input"], Json::object());
  EXPECT_EQ(events[10].second["delta"]["partial_json"], R"({"a":1})");
  EXPECT_EQ(events[10].second["index"], 2);
  EXPECT_EQ(events[12].second["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(events[12].second["usage"], Json::parse(R"({"input_tokens":3,"output_tokens":4})"));

  anthropic::EventStream e("msg_2", "m", 0);
  const auto err = testing::parse_named_sse(e.chunk(Json::parse(R"({"error":"runner crashed"})")));
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0].second,
            Json::parse(R"({"type":"error","error":{"type":"api_error","message":"runner crashed"}})"));
}

TEST(AnthropicResponse, ErrorShape) {
  const auto check = [](int status, const char* type) {
    const HttpResponse r = anthropic::error_response(status, "boom");
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(Json::parse(r.body),
              Json({{"type", "error"}, {"error", {{"type", type}, {"message", "boom"}}}}));
  };
  check(400, "invalid_request_error");
  check(404, "not_found_error");
  check(500, "api_error");
  check(503, "overloaded_error");
  HttpResponse native;
  native.status = 404;
  native.body = R"({"error":"model 'x' not found"})";
  const HttpResponse r = anthropic::rewrap_native_error(native);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Json::parse(r.body)["error"]["message"], "model 'x' not found");
  EXPECT_EQ(random_id("msg_").size(), 28u);
  EXPECT_NE(random_id("msg_"), random_id("msg_"));
}

class AnthropicApiTest : public ::testing::Test {
 protected:
  AnthropicApiTest()
      : script_(std::make_shared<Script>()),
        api_(store_.open(), default_scheduler_effects(FakeRunner::factory(script_)), ApiConfig{}) {}

  HttpResponse post(const std::string& path, const std::string& body) {
    return api_.handle(HttpRequest{.method = "POST", .path = path, .body = body});
  }

  FakeStore store_;
  std::shared_ptr<Script> script_;
  Api api_;
};

constexpr const char* kToolRequest = R"({"model":"thinker","max_tokens":32,
    "tools":[{"name":"get_weather","input_schema":{"type":"object"}}],
    "messages":[{"role":"user","content":"w?"}])";

TEST_F(AnthropicApiTest, MessagesWithThinkingAndToolUse) {
  script_->pieces = {"<think>", "hmm", "</think>", "Sure",
                     R"(<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>)"};
  const HttpResponse r = post("/v1/messages", std::string(kToolRequest) + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json m = Json::parse(r.body);
  EXPECT_TRUE(m["id"].get<std::string>().starts_with("msg_"));
  EXPECT_EQ(m["model"], "thinker");
  ASSERT_EQ(m["content"].size(), 3u) << m.dump();
  EXPECT_EQ(m["content"][0]["thinking"], "hmm");
  EXPECT_EQ(m["content"][1]["text"], "Sure");
  EXPECT_EQ(m["content"][2]["name"], "get_weather");
  EXPECT_EQ(m["content"][2]["input"]["city"], "Paris");
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_EQ(m["usage"]["output_tokens"], 5);
  // The whole prompt (the fake tokenizer: one token a byte), whatever the runner evaluated.
  EXPECT_EQ(m["usage"]["input_tokens"], script_->requests.back().prompt.size());
  EXPECT_EQ(script_->requests.back().options.num_predict, 32);
  EXPECT_NE(script_->requests.back().prompt.find("get_weather"), std::string::npos);
}

TEST_F(AnthropicApiTest, StreamedEvents) {
  script_->pieces = {"<think>", "hmm", "</think>", "Hel", "lo"};
  const HttpResponse r = post("/v1/messages", R"({"model":"thinker","max_tokens":8,"stream":true,
      "messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/event-stream");
  const auto events = testing::parse_named_sse(testing::drain(r));
  EXPECT_EQ(names(events),
            (std::vector<std::string>{
                "message_start", "ping", "content_block_start:thinking", "content_block_delta:thinking_delta",
                "content_block_stop", "content_block_start:text", "content_block_delta:text_delta",
                "content_block_delta:text_delta", "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(events.at(9).second["delta"]["stop_reason"], "end_turn");
}

TEST_F(AnthropicApiTest, StopSequenceIsReported) {
  script_->pieces = {"Hel", "lo"};
  script_->stop_sequence = "END";
  const std::string request = R"({"model":"thinker","max_tokens":8,"stop_sequences":["END"],
      "messages":[{"role":"user","content":"hi"}])";
  HttpResponse r = post("/v1/messages", request + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json m = Json::parse(r.body);
  EXPECT_EQ(m["stop_reason"], "stop_sequence");
  EXPECT_EQ(m["stop_sequence"], "END");
  EXPECT_EQ(script_->requests.back().options.stop, std::vector<std::string>{"END"});

  r = HttpResponse{};  // releases the model, as sending the response does
  r = post("/v1/messages", request + R"(,"stream":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto events = testing::parse_named_sse(testing::drain(r));
  ASSERT_GE(events.size(), 2u);
  const Json& delta = events[events.size() - 2].second;
  EXPECT_EQ(delta["type"], "message_delta");
  EXPECT_EQ(delta["delta"]["stop_reason"], "stop_sequence");
  EXPECT_EQ(delta["delta"]["stop_sequence"], "END");

  script_->stop_sequence.clear();
  r = HttpResponse{};  // releases the model, as sending the response does
  r = post("/v1/messages", request + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["stop_reason"], "end_turn");
  EXPECT_TRUE(Json::parse(r.body)["stop_sequence"].is_null());
}

TEST_F(AnthropicApiTest, ToolChoiceNoneHidesTools) {
  script_->pieces = {R"(<tool_call>{"name":"get_weather","arguments":{}}</tool_call>)"};
  const HttpResponse r =
      post("/v1/messages", std::string(kToolRequest) + R"(,"tool_choice":{"type":"none"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json m = Json::parse(r.body);
  EXPECT_EQ(m["stop_reason"], "end_turn");
  ASSERT_EQ(m["content"].size(), 1u);
  EXPECT_EQ(m["content"][0]["type"], "text");
  EXPECT_EQ(script_->requests.back().prompt.find("get_weather"), std::string::npos);
}

TEST_F(AnthropicApiTest, CountTokensMatchesThePromptOfAMessage) {
  ASSERT_EQ(post("/v1/messages", std::string(kToolRequest) + "}").status, 200);
  const size_t prompt_bytes = script_->requests.back().prompt.size();  // the fake tokenizer: one token a byte
  const HttpResponse r = post("/v1/messages/count_tokens", std::string(kToolRequest) + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body), Json({{"input_tokens", prompt_bytes}}));
  const HttpResponse no_max =
      post("/v1/messages/count_tokens", R"({"model":"tiny","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(no_max.status, 200) << no_max.body;
}

TEST_F(AnthropicApiTest, ErrorsInAnthropicShape) {
  const auto error_type = [](const HttpResponse& r) {
    const Json j = Json::parse(r.body);
    EXPECT_EQ(j["type"], "error") << r.body;
    return j["error"]["type"].get<std::string>();
  };
  HttpResponse r = post("/v1/messages", R"({"model":"tiny","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_type(r), "invalid_request_error");
  r = post("/v1/messages", R"({"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_type(r), "not_found_error");
  r = post("/v1/messages/count_tokens", R"({"model":"nope","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_type(r), "not_found_error");
  r = post("/v1/messages",
           R"({"model":"tiny","max_tokens":5,"thinking":{"type":"enabled","budget_tokens":100},
      "messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Json::parse(r.body)["error"]["message"], "\"tiny\" does not support thinking");
  r = post("/v1/messages", "{");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_type(r), "invalid_request_error");
}

}  // namespace
}  // namespace paddock::server
