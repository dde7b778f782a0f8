#include "server/responses.h"

#include <gtest/gtest.h>

#include "server/api.h"
#include "server/fake_runner_test.h"

namespace paddock::server {
namespace {

using testing::FakeRunner;
using testing::FakeStore;
using testing::Script;

responses::Request request_of(const std::string& body, const Json& history = Json::array(),
                              const Json& previous_output = Json::array()) {
  auto r = responses::to_native_chat(Json::parse(body), history, previous_output);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : responses::Request{};
}

std::string error_of(const std::string& body) {
  auto r = responses::to_native_chat(Json::parse(body), Json::array(), Json::array());
  EXPECT_FALSE(r.ok()) << body;
  return r.ok() ? "" : r.status().message();
}

TEST(ResponsesRequest, StringInputInstructionsAndOptions) {
  const auto r = request_of(R"({"model":"m","input":"hi","instructions":"be brief","max_output_tokens":20,
      "temperature":0.5,"top_p":0.9,"stream":true,"metadata":{"k":"v"}})");
  EXPECT_EQ(r.native, Json::parse(R"({"model":"m","messages":[{"role":"system","content":"be brief"},
      {"role":"user","content":"hi"}],"stream":true,"options":{"num_predict":20,"temperature":0.5,"top_p":0.9}})"));
  // The instructions are not inherited by a follow-up (as OpenAI does).
  EXPECT_EQ(r.messages, Json::parse(R"([{"role":"user","content":"hi"}])"));
  EXPECT_TRUE(r.store);
  EXPECT_EQ(r.echo["instructions"], "be brief");
  EXPECT_EQ(r.echo["max_output_tokens"], 20);
  EXPECT_EQ(r.echo["temperature"], 0.5);
  EXPECT_EQ(r.echo["metadata"], Json::parse(R"({"k":"v"})"));
  EXPECT_EQ(r.echo["text"], Json::parse(R"({"format":{"type":"text"}})"));
  EXPECT_EQ(r.echo["tool_choice"], "auto");

  // Unset sampling is OpenAI's default of 1, as on /v1/chat/completions; store can be turned off.
  const auto d = request_of(R"({"model":"m","input":"hi","store":false})");
  EXPECT_EQ(d.native["options"], Json::parse(R"({"temperature":1.0,"top_p":1.0})"));
  EXPECT_EQ(d.native["stream"], false);
  EXPECT_FALSE(d.store);
  EXPECT_EQ(d.echo["instructions"], nullptr);
}

TEST(ResponsesRequest, ItemsBecomeNativeMessages) {
  const auto r = request_of(R"({"model":"m","input":[
      {"role":"developer","content":"dev rules"},
      {"type":"message","role":"user","content":[{"type":"input_text","text":"weather "},
                                                 {"type":"input_text","text":"in Paris?"}]},
      {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"ignored: content wins"}],
       "content":[{"type":"reasoning_text","text":"look "},{"type":"reasoning_text","text":"it up"}]},
      {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},
      {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
      {"type":"function_call","call_id":"call_2","name":"get_time","arguments":""},
      {"type":"function_call_output","call_id":"call_1","output":"sunny"},
      {"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"noon"}]},
      {"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,iVBO"}]}
  ]})");
  const Json& m = r.native["messages"];
  ASSERT_EQ(m.size(), 6u) << m.dump();
  EXPECT_EQ(m[0], Json::parse(R"({"role":"system","content":"dev rules"})"));
  EXPECT_EQ(m[1], Json::parse(R"({"role":"user","content":"weather in Paris?"})"));
  EXPECT_EQ(m[2],
            Json::parse(R"({"role":"assistant","content":"Checking.","thinking":"look it up","tool_calls":[
      {"id":"call_1","function":{"name":"get_weather","arguments":{"city":"Paris"}}},
      {"id":"call_2","function":{"name":"get_time","arguments":{}}}]})"));
  EXPECT_EQ(
      m[3],
      Json::parse(R"({"role":"tool","content":"sunny","tool_call_id":"call_1","tool_name":"get_weather"})"));
  EXPECT_EQ(m[4], Json::parse(
                      R"({"role":"tool","content":"noon","tool_call_id":"call_2","tool_name":"get_time"})"));
  EXPECT_EQ(m[5], Json::parse(R"({"role":"user","content":"","images":["iVBO"]})"));
  EXPECT_EQ(r.messages, m);  // no instructions: the same messages
}

TEST(ResponsesRequest, ToolsToolChoiceFormatAndReasoning) {
  const std::string head = R"({"model":"m","input":"x",)";
  const auto r = request_of(head + R"("tools":[{"type":"function","name":"f","description":"does f",
      "parameters":{"type":"object"},"strict":true},{"type":"function","name":"g"}],
      "tool_choice":{"type":"function","name":"f"},
      "text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object","properties":{"a":{"type":"integer"}}},"strict":true}},
      "reasoning":{"effort":"high","summary":"auto"}})");
  EXPECT_EQ(r.native["tools"], Json::parse(R"([
      {"type":"function","function":{"name":"f","description":"does f","parameters":{"type":"object"}}},
      {"type":"function","function":{"name":"g","description":"","parameters":{}}}])"));
  EXPECT_EQ(r.native["tool_choice"], Json::parse(R"({"type":"function","function":{"name":"f"}})"));
  EXPECT_EQ(r.native["format"], Json::parse(R"({"type":"object","properties":{"a":{"type":"integer"}}})"));
  EXPECT_EQ(r.native["think"], "high");
  EXPECT_EQ(r.echo["reasoning"], Json::parse(R"({"effort":"high","summary":"auto"})"));
  EXPECT_EQ(r.echo["tools"].size(), 2u);
  EXPECT_EQ(r.echo["text"]["format"]["name"], "s");

  EXPECT_EQ(request_of(head + R"("tool_choice":"required"})").native["tool_choice"], "required");
  EXPECT_EQ(request_of(head + R"("text":{"format":{"type":"json_object"}}})").native["format"], "json");
  EXPECT_FALSE(request_of(head + R"("text":{"format":{"type":"text"}}})").native.contains("format"));
  EXPECT_EQ(request_of(head + R"("reasoning":{"effort":"none"}})").native["think"], false);
  EXPECT_EQ(request_of(head + R"("reasoning":{"effort":"minimal"}})").native["think"], "low");
  EXPECT_FALSE(request_of(head + R"("reasoning":{}})").native.contains("think"));
  EXPECT_FALSE(request_of(head + R"("tools":[]})").native.contains("tools"));
}

TEST(ResponsesRequest, FollowUpStartsFromThePreviousConversation) {
  const Json history = Json::parse(R"([{"role":"user","content":"call f"}])");
  const Json output = Json::parse(R"([
      {"id":"rs_1","type":"reasoning","status":"completed","summary":[],"content":[{"type":"reasoning_text","text":"hm"}]},
      {"id":"fc_1","type":"function_call","status":"completed","call_id":"call_9","name":"f","arguments":"{\"a\":1}"}])");
  const auto r = request_of(R"({"model":"m","instructions":"new rules","previous_response_id":"resp_1",
      "input":[{"type":"function_call_output","call_id":"call_9","output":"42"}]})",
                            history, output);
  EXPECT_EQ(r.native["messages"], Json::parse(R"([{"role":"system","content":"new rules"},
      {"role":"user","content":"call f"},
      {"role":"assistant","content":"","thinking":"hm","tool_calls":[{"id":"call_9","function":{"name":"f","arguments":{"a":1}}}]},
      {"role":"tool","content":"42","tool_call_id":"call_9","tool_name":"f"}])"));
  EXPECT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.echo["previous_response_id"], "resp_1");

  EXPECT_EQ(*responses::previous_response_id(Json::parse(R"({"previous_response_id":"resp_1"})")), "resp_1");
  EXPECT_EQ(*responses::previous_response_id(Json::parse(R"({"previous_response_id":null})")), "");
  EXPECT_FALSE(responses::previous_response_id(Json::parse(R"({"previous_response_id":5})")).ok());
}

TEST(ResponsesRequest, ClientErrorsNameTheField) {
  EXPECT_EQ(error_of(R"({"input":"x"})"), "model: expected a string");
  EXPECT_EQ(error_of(R"({"model":"m"})"), "input: expected a string or an array of items");
  EXPECT_EQ(error_of(R"({"model":"m","input":[]})"), "input: expected at least one item");
  EXPECT_EQ(error_of(R"({"model":"m","input":5})"), "input: expected a string or an array of items");
  EXPECT_EQ(error_of(R"({"model":"m","input":[{"type":"web_search_call","id":"w"}]})"),
            "input[0].type: unsupported item type \"web_search_call\"");
  EXPECT_EQ(error_of(R"({"model":"m","input":[{"role":"robot","content":"x"}]})"),
            "input[0].role: must be \"user\", \"assistant\", \"system\" or \"developer\", not \"robot\"");
  EXPECT_EQ(
      error_of(R"({"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]})"),
      "input[0].content[0].type: unsupported content part type \"input_file\"");
  EXPECT_EQ(
      error_of(
          R"({"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]})"),
      "input[0].content[0].image_url: only base64 data: URLs are supported (no file_id, no http URLs)");
  EXPECT_EQ(
      error_of(
          R"({"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"[1]"}]})"),
      "input[0].arguments: expected a JSON object in a string");
  EXPECT_EQ(error_of(R"({"model":"m","input":[{"type":"function_call_output","output":"x"}]})"),
            "input[0].call_id: expected a string");
  EXPECT_EQ(error_of(R"({"model":"m","input":[{"type":"item_reference","id":"msg_1"}]})"),
            "input[0]: item references are not supported: send the item itself or previous_response_id");
  EXPECT_EQ(error_of(R"({"model":"m","input":"x","tools":[{"type":"web_search_preview"}]})"),
            "tools[0].type: only function tools are supported, not \"web_search_preview\"");
  EXPECT_EQ(error_of(R"({"model":"m","input":"x","tool_choice":"sometimes"})"),
            "tool_choice: must be \"auto\", \"none\" or \"required\", not \"sometimes\"");
  EXPECT_EQ(error_of(R"({"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"s"}}})"),
            "text.format.schema: expected a JSON Schema object");
  EXPECT_EQ(error_of(R"({"model":"m","input":"x","reasoning":{"effort":"huge"}})")
                .rfind("invalid reasoning value", 0),
            0u);
  EXPECT_EQ(error_of(R"({"model":"m","input":"x","max_output_tokens":0})"),
            "max_output_tokens: expected an integer of at least 1");
  EXPECT_EQ(error_of(R"({"model":"m","input":"x","background":true})"),
            "background: background responses are not supported");
  EXPECT_EQ(error_of(R"({"model":"m","input":"x","stream":"yes"})"), "stream: expected a boolean");
  EXPECT_EQ(error_of(R"([1])"), "invalid request body: expected a JSON object");
  // Arguments are JSON in a string, parsed here: as deep a nesting as a body may have.
  const Json deep{
      {"model", "m"},
      {"input", Json::array({Json{{"type", "function_call"},
                                  {"call_id", "c"},
                                  {"name", "f"},
                                  {"arguments", std::string(600, '[') + std::string(600, ']')}}})}};
  const auto r = responses::to_native_chat(deep, Json::array(), Json::array());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "input[0].arguments: nested too deep");
}

responses::Meta meta() {
  return responses::Meta{.id = "resp_1",
                         .model = "m",
                         .created_at = 1700000000,
                         .echo = Json{{"instructions", nullptr}, {"store", true}}};
}

// Event types in order, with the sequence numbers checked to count up from 0.
std::vector<std::string> types(const std::vector<Json>& events) {
  std::vector<std::string> out;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["sequence_number"], i) << events[i].dump();
    out.push_back(events[i]["type"].get<std::string>());
  }
  return out;
}

void append(std::vector<Json>* all, std::vector<Json> more) {
  for (Json& e : more) all->push_back(std::move(e));
}

TEST(ResponsesResponse, WholeNativeResponse) {
  responses::ResponseBuilder b(meta());
  b.add(Json::parse(R"({"message":{"role":"assistant","content":"Hi","thinking":"hm",
      "tool_calls":[{"id":"call_abc","function":{"index":0,"name":"f","arguments":{"a":1}}}]},
      "done":true,"done_reason":"stop","prompt_eval_count":10,"prompt_cached_count":4,"eval_count":5})"));
  ASSERT_TRUE(b.finished());
  const Json& r = b.response();
  EXPECT_EQ(r["id"], "resp_1");
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["created_at"], 1700000000);
  EXPECT_EQ(r["status"], "completed");
  EXPECT_EQ(r["incomplete_details"], nullptr);
  EXPECT_EQ(r["model"], "m");
  EXPECT_EQ(r["store"], true);  // the echo
  const Json& out = r["output"];
  ASSERT_EQ(out.size(), 3u) << out.dump();
  EXPECT_EQ(out[0]["type"], "reasoning");
  EXPECT_TRUE(out[0]["id"].get<std::string>().starts_with("rs_"));
  EXPECT_EQ(out[0]["content"], Json::parse(R"([{"type":"reasoning_text","text":"hm"}])"));
  EXPECT_EQ(out[0]["status"], "completed");
  EXPECT_EQ(out[1]["type"], "message");
  EXPECT_TRUE(out[1]["id"].get<std::string>().starts_with("msg_"));
  EXPECT_EQ(out[1]["role"], "assistant");
  EXPECT_EQ(out[1]["status"], "completed");
  EXPECT_EQ(out[1]["content"], Json::parse(R"([{"type":"output_text","text":"Hi","annotations":[]}])"));
  EXPECT_EQ(out[2]["type"], "function_call");
  EXPECT_TRUE(out[2]["id"].get<std::string>().starts_with("fc_"));
  EXPECT_EQ(out[2]["call_id"], "call_abc");
  EXPECT_EQ(out[2]["name"], "f");
  EXPECT_EQ(out[2]["arguments"], R"({"a":1})");
  EXPECT_EQ(out[2]["status"], "completed");
  EXPECT_EQ(r["usage"], Json::parse(R"({"input_tokens":10,"input_tokens_details":{"cached_tokens":4},
      "output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15})"));
}

TEST(ResponsesResponse, MaxOutputTokensMakesItIncomplete) {
  responses::ResponseBuilder b(meta());
  const auto events = b.add(Json::parse(R"({"message":{"role":"assistant","content":"Once upon"},
      "done":true,"done_reason":"length","prompt_eval_count":3,"eval_count":2})"));
  EXPECT_EQ(events.back()["type"], "response.incomplete");
  const Json& r = b.response();
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"], Json::parse(R"({"reason":"max_output_tokens"})"));
  ASSERT_EQ(r["output"].size(), 1u);
  EXPECT_EQ(r["output"][0]["status"], "incomplete");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Once upon");
  EXPECT_EQ(events.back()["response"], r);
}

TEST(ResponsesResponse, StreamedEvents) {
  responses::ResponseBuilder b(meta());
  std::vector<Json> all = b.start();
  EXPECT_EQ(all[0]["response"]["status"], "in_progress");
  EXPECT_EQ(all[0]["response"]["output"], Json::array());
  for (
      const char* chunk :
      {R"({"message":{"role":"assistant","content":"","thinking":"a"},"done":false})",
       R"({"message":{"role":"assistant","content":"","thinking":"b"},"done":false})",
       R"({"message":{"role":"assistant","content":"Hel"},"done":false})",
       R"({"message":{"role":"assistant","content":"lo"},"done":false})",
       R"({"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"index":0,"name":"f","arguments":{"a":1}}}]},"done":false})",
       R"({"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":6})"}) {
    EXPECT_FALSE(b.finished());
    append(&all, b.add(Json::parse(chunk)));
  }
  EXPECT_TRUE(b.finished());
  EXPECT_EQ(types(all), (std::vector<std::string>{"response.created",
                                                  "response.in_progress",
                                                  "response.output_item.added",
                                                  "response.content_part.added",
                                                  "response.reasoning_text.delta",
                                                  "response.reasoning_text.delta",
                                                  "response.reasoning_text.done",
                                                  "response.content_part.done",
                                                  "response.output_item.done",
                                                  "response.output_item.added",
                                                  "response.content_part.added",
                                                  "response.output_text.delta",
                                                  "response.output_text.delta",
                                                  "response.output_text.done",
                                                  "response.content_part.done",
                                                  "response.output_item.done",
                                                  "response.output_item.added",
                                                  "response.function_call_arguments.delta",
                                                  "response.function_call_arguments.done",
                                                  "response.output_item.done",
                                                  "response.completed"}));
  EXPECT_EQ(all[2]["output_index"], 0);
  EXPECT_EQ(all[2]["item"]["type"], "reasoning");
  EXPECT_EQ(all[5]["delta"], "b");
  EXPECT_EQ(all[6]["text"], "ab");
  EXPECT_EQ(all[9]["output_index"], 1);
  EXPECT_EQ(all[9]["item"]["status"], "in_progress");
  EXPECT_EQ(all[10]["part"], Json::parse(R"({"type":"output_text","text":"","annotations":[]})"));
  EXPECT_EQ(all[11]["item_id"], all[9]["item"]["id"]);
  EXPECT_EQ(all[11]["content_index"], 0);
  EXPECT_EQ(all[12]["delta"], "lo");
  EXPECT_EQ(all[13]["text"], "Hello");
  EXPECT_EQ(all[14]["part"]["text"], "Hello");
  EXPECT_EQ(all[15]["item"]["status"], "completed");
  EXPECT_EQ(all[16]["item"]["arguments"], "");
  EXPECT_EQ(all[17]["delta"], R"({"a":1})");
  EXPECT_EQ(all[18]["arguments"], R"({"a":1})");
  EXPECT_EQ(all[19]["item"]["call_id"], "call_x");
  EXPECT_EQ(all[19]["output_index"], 2);
  const Json& done = all.back()["response"];
  EXPECT_EQ(done, b.response());
  EXPECT_EQ(done["status"], "completed");
  ASSERT_EQ(done["output"].size(), 3u);
  EXPECT_EQ(done["output"][0]["content"][0]["text"], "ab");
  EXPECT_EQ(done["output"][1]["content"][0]["text"], "Hello");
  EXPECT_EQ(done["output"][2]["arguments"], R"({"a":1})");
  EXPECT_EQ(done["usage"]["output_tokens"], 6);

  // As server-sent events, each named by its type.
  EXPECT_EQ(responses::sse({all[12]}), "event: response.output_text.delta\ndata: " + all[12].dump() + "\n\n");
}

TEST(ResponsesResponse, ErrorChunkFailsTheResponse) {
  responses::ResponseBuilder b(meta());
  std::vector<Json> all = b.start();
  append(&all, b.add(Json::parse(R"({"message":{"role":"assistant","content":"Hi"},"done":false})")));
  append(&all, b.add(Json::parse(R"({"error":"runner crashed"})")));
  EXPECT_TRUE(b.finished());
  EXPECT_EQ(all.at(all.size() - 2)["type"], "response.failed");
  EXPECT_EQ(b.response()["status"], "failed");
  EXPECT_EQ(b.response()["error"], Json::parse(R"({"code":"server_error","message":"runner crashed"})"));
  EXPECT_EQ(b.response()["output"][0]["status"], "incomplete");
  EXPECT_EQ(all.back()["type"], "error");
  EXPECT_EQ(all.back()["message"], "runner crashed");
  types(all);
  EXPECT_TRUE(b.add(Json::parse(R"({"message":{"content":"late"},"done":true})")).empty());
}

// The data of each SSE record, in order (testing::parse_named_sse checks the names).
std::vector<Json> parse_sse(const std::string& s) {
  std::vector<Json> out;
  for (auto& [name, data] : testing::parse_named_sse(s)) out.push_back(std::move(data));
  return out;
}

class ResponsesApiTest : public ::testing::Test {
 protected:
  ResponsesApiTest()
      : script_(std::make_shared<Script>()),
        api_(store_.open(), default_scheduler_effects(FakeRunner::factory(script_)), ApiConfig{}) {}

  HttpResponse call(const std::string& method, const std::string& path, const std::string& body = "") {
    return api_.handle(HttpRequest{.method = method, .path = path, .body = body});
  }
  static std::string error_type(const HttpResponse& r) {
    const Json j = Json::parse(r.body);
    EXPECT_TRUE(j["error"].contains("message") && j["error"].contains("param")) << r.body;
    return j["error"]["type"].get<std::string>();
  }

  FakeStore store_;
  std::shared_ptr<Script> script_;
  Api api_;
};

TEST_F(ResponsesApiTest, ReasoningTextAndAFunctionCallThenAFollowUp) {
  script_->pieces = {"<think>", "hmm", "</think>", "Sure",
                     R"(<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>)"};
  HttpResponse r = call("POST", "/v1/responses", R"({"model":"thinker","instructions":"be brief",
      "max_output_tokens":32,"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}],
      "input":"weather in Paris?"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json first = Json::parse(r.body);
  EXPECT_TRUE(first["id"].get<std::string>().starts_with("resp_"));
  EXPECT_EQ(first["status"], "completed");
  ASSERT_EQ(first["output"].size(), 3u) << first.dump();
  EXPECT_EQ(first["output"][0]["content"][0]["text"], "hmm");
  EXPECT_EQ(first["output"][1]["content"][0]["text"], "Sure");
  const Json call_item = first["output"][2];
  EXPECT_EQ(call_item["name"], "get_weather");
  EXPECT_EQ(Json::parse(call_item["arguments"].get<std::string>()), Json::parse(R"({"city":"Paris"})"));
  EXPECT_EQ(first["usage"]["output_tokens"], 5);
  EXPECT_EQ(first["usage"]["input_tokens"], script_->requests.back().prompt.size());
  EXPECT_EQ(script_->requests.back().options.num_predict, 32);
  const std::string first_prompt = script_->requests.back().prompt;
  EXPECT_NE(first_prompt.find("<system>be brief"), std::string::npos) << first_prompt;

  // Stored: GET returns it as it was answered.
  const HttpResponse got = call("GET", "/v1/responses/" + first["id"].get<std::string>());
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(Json::parse(got.body), first);

  // The follow-up's prompt is the first conversation (without its instructions), the call's
  // output, then the new input.
  script_->pieces = {"It is sunny."};
  r = call("POST", "/v1/responses",
           R"({"model":"thinker","previous_response_id":")" + first["id"].get<std::string>() +
               R"(","input":[{"type":"function_call_output","call_id":")" +
               call_item["call_id"].get<std::string>() + R"(","output":"sunny"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json second = Json::parse(r.body);
  EXPECT_EQ(second["previous_response_id"], first["id"]);
  EXPECT_EQ(second["output"][0]["content"][0]["text"], "It is sunny.");
  const std::string prompt = script_->requests.back().prompt;
  EXPECT_EQ(prompt,
            "<user>weather in Paris?<assistant><think>hmm</think>Sure<tool_call>"
            R"({"index":0,"name":"get_weather","arguments":{"city":"Paris"}})"
            "</tool_call><tool>sunny<assistant>")
      << prompt;

  // A third turn follows the second, so it sees the whole chain.
  r = call("POST", "/v1/responses",
           R"({"model":"thinker","previous_response_id":")" + second["id"].get<std::string>() +
               R"(","input":"thanks"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(script_->requests.back().prompt,
            prompt.substr(0, prompt.size() - 11) + "<assistant>It is sunny.<user>thanks<assistant>");
}

TEST_F(ResponsesApiTest, StreamedEventsAndTheStoredResult) {
  script_->pieces = {"Hel", "lo"};
  script_->done_reason = "length";
  const HttpResponse r =
      call("POST", "/v1/responses", R"({"model":"tiny","input":"hi","stream":true,"max_output_tokens":2})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/event-stream");
  const auto events = parse_sse(testing::drain(r));
  ASSERT_GE(events.size(), 10u);
  EXPECT_EQ(events.front()["type"], "response.created");
  EXPECT_EQ(events.back()["type"], "response.incomplete");
  std::string text;
  for (const Json& e : events) {
    if (e["type"] == "response.output_text.delta") text += e["delta"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello");
  const Json& final = events.back()["response"];
  EXPECT_EQ(final["incomplete_details"]["reason"], "max_output_tokens");
  const HttpResponse got = call("GET", "/v1/responses/" + final["id"].get<std::string>());
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(Json::parse(got.body), final);
}

TEST_F(ResponsesApiTest, StoreFalseIsNotKept) {
  const HttpResponse r = call("POST", "/v1/responses", R"({"model":"tiny","input":"hi","store":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string id = Json::parse(r.body)["id"];
  const HttpResponse got = call("GET", "/v1/responses/" + id);
  EXPECT_EQ(got.status, 404);
  EXPECT_EQ(error_type(got), "not_found_error");
  const HttpResponse follow = call(
      "POST", "/v1/responses", R"({"model":"tiny","input":"more","previous_response_id":")" + id + R"("})");
  EXPECT_EQ(follow.status, 404);
  EXPECT_EQ(Json::parse(follow.body)["error"]["message"],
            "Previous response with id '" + id + "' not found.");
}

TEST_F(ResponsesApiTest, ErrorsInOpenAiShape) {
  HttpResponse r = call("POST", "/v1/responses", R"({"model":"nope","input":"x"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_type(r), "not_found_error");
  r = call("POST", "/v1/responses", R"({"model":"tiny","input":[{"type":"bogus"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_type(r), "invalid_request_error");
  r = call("POST", "/v1/responses", R"({"model":"tiny","input":"x","reasoning":{"effort":"high"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Json::parse(r.body)["error"]["message"], "\"tiny\" does not support thinking");
  r = call("POST", "/v1/responses", R"({"model":"tiny","input":"x","tool_choice":"required"})");
  EXPECT_EQ(r.status, 400);
  r = call("POST", "/v1/responses", "{");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_type(r), "invalid_request_error");
  r = call("POST", "/v1/responses", R"({"model":"tiny","input":{"role":"user"}})");
  EXPECT_EQ(r.status, 400);
  r = call("GET", "/v1/responses/resp_unknown");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_type(r), "not_found_error");
  EXPECT_EQ(script_->requests.size(), 0u);
}

}  // namespace
}  // namespace paddock::server
