#include "runner/runner_protocol.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "runner/runner_child.h"

namespace paddock::runner {
namespace {

using nlohmann::json;

TEST(RunnerProtocol, FramesSurviveBytewiseDelivery) {
  const json a = {{"type", "chunk"}, {"n", 1}};
  const json b = {{"type", "done"}, {"text", "h\xc3\xa9llo"}};
  const std::string stream = encode_frame(a) + encode_frame(b);
  FrameDecoder d;
  std::vector<json> got;
  for (char c : stream) {
    d.feed(std::string_view(&c, 1));
    auto m = d.next();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    if (*m) got.push_back(**m);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], a);
  EXPECT_EQ(got[1], b);
  EXPECT_TRUE(d.empty());
}

TEST(RunnerProtocol, RejectsHugeEmptyAndGarbageFrames) {
  FrameDecoder huge;
  huge.feed(std::string("\xff\xff\xff\xff", 4));
  EXPECT_EQ(huge.next().status().code(), Code::kCorrupt);

  FrameDecoder empty;
  empty.feed(std::string("\0\0\0\0", 4));
  EXPECT_EQ(empty.next().status().code(), Code::kCorrupt);

  FrameDecoder garbage;
  garbage.feed(std::string("\0\0\0\3abc", 7));
  EXPECT_EQ(garbage.next().status().code(), Code::kCorrupt);

  FrameDecoder not_object;
  not_object.feed(encode_frame(json::array({1, 2})));
  EXPECT_EQ(not_object.next().status().code(), Code::kCorrupt);

  FrameDecoder untyped;
  untyped.feed(encode_frame(json{{"x", 1}}));
  EXPECT_EQ(untyped.next().status().code(), Code::kCorrupt);
}

TEST(RunnerProtocol, InvalidUtf8IsReplacedNotThrown) {
  FrameDecoder d;
  d.feed(encode_frame(json{{"type", "result"}, {"text", std::string("a\xff")}}));
  auto m = d.next();
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->has_value());
  EXPECT_EQ((**m)["text"], "a\xef\xbf\xbd");
}

TEST(RunnerProtocol, CompletionRequestRoundTrips) {
  CompletionRequest r;
  r.prompt = "hi";
  r.tokens = {1, 2, 3};
  r.images = {std::string("\x00\xff\x10\x80x", 5), "", "ab"};
  r.options.temperature = 0.5;
  r.options.seed = 42;
  r.options.stop = {"\n"};
  r.format = "json";
  r.logprobs = true;
  r.top_logprobs = 3;
  auto back = completion_request_from_json(to_json(r));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->prompt, r.prompt);
  EXPECT_EQ(back->tokens, r.tokens);
  EXPECT_EQ(back->images, r.images);
  EXPECT_EQ(back->options.temperature, 0.5);
  EXPECT_EQ(back->options.seed, 42);
  EXPECT_FALSE(back->options.top_k.has_value());
  EXPECT_EQ(back->options.stop, r.options.stop);
  EXPECT_EQ(back->format, "json");
  EXPECT_TRUE(back->logprobs);
  EXPECT_EQ(back->top_logprobs, 3);
  EXPECT_FALSE(back->thinking_budget.has_value());
}

TEST(RunnerProtocol, ThinkingBudgetRoundTrips) {
  CompletionRequest r;
  r.prompt = "hi";
  r.thinking_budget =
      ThinkingBudget{.max_tokens = 12, .open = "<think>", .close = "</think>\n\n", .starts_inside = true};
  auto back = completion_request_from_json(to_json(r));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  ASSERT_TRUE(back->thinking_budget.has_value());
  EXPECT_EQ(back->thinking_budget->max_tokens, 12);
  EXPECT_EQ(back->thinking_budget->open, "<think>");
  EXPECT_EQ(back->thinking_budget->close, "</think>\n\n");
  EXPECT_TRUE(back->thinking_budget->starts_inside);

  json bad = to_json(r);
  bad["thinking_budget"].erase("close");
  EXPECT_EQ(completion_request_from_json(bad).status().code(), Code::kCorrupt);
}

TEST(RunnerProtocol, GrammarRoundTrips) {
  CompletionRequest r;
  r.prompt = "hi";
  r.grammar = "root ::= \"<t>\" [a-z]+ \"\\n\"";
  auto back = completion_request_from_json(to_json(r));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->grammar, r.grammar);
  EXPECT_EQ(back->format, "");
  json missing = to_json(r);
  missing.erase("grammar");  // both ends are built together: a request without it is corrupt
  EXPECT_EQ(completion_request_from_json(missing).status().code(), Code::kCorrupt);
}

TEST(RunnerProtocol, ChunkFactsAndErrorsRoundTrip) {
  CompletionChunk c;
  c.text = "x";
  c.done = true;
  c.done_reason = "length";
  c.eval_count = 7;
  c.prompt_cached_count = 3;
  c.truncated_tokens = 3;
  c.stop_sequence = "\nUser:";
  c.logprobs = {{"a", -0.5, {97}, {{"b", -1.0, {98}, {}}}}};
  auto cb = completion_chunk_from_json(to_json(c));
  ASSERT_TRUE(cb.ok());
  EXPECT_EQ(cb->text, "x");
  EXPECT_EQ(cb->done_reason, "length");
  EXPECT_EQ(cb->eval_count, 7);
  EXPECT_EQ(cb->prompt_cached_count, 3);
  EXPECT_EQ(cb->truncated_tokens, 3);
  EXPECT_EQ(cb->stop_sequence, "\nUser:");
  ASSERT_EQ(cb->logprobs.size(), 1u);
  EXPECT_EQ(cb->logprobs[0].top[0].token, "b");

  ModelFacts f{.context_length = 2048, .trained_context_length = 4096, .memory_bytes = 123};
  auto fb = model_facts_from_json(to_json(f));
  ASSERT_TRUE(fb.ok());
  EXPECT_EQ(fb->context_length, 2048);
  EXPECT_EQ(fb->memory_bytes, 123u);

  const Status s = status_from_error(error_message(Status(Code::kInvalidArgument, "bad")));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad");
  const Status odd = status_from_error(json{{"type", "error"}, {"code", "x"}, {"message", 3}});
  EXPECT_EQ(odd.code(), Code::kInternal);
  EXPECT_EQ(odd.message(), "runner error");
  EXPECT_EQ(status_from_error(json{{"type", "error"}, {"code", 999}}).code(), Code::kInternal);
  EXPECT_EQ(completion_chunk_from_json(json{{"text", 1}}).status().code(), Code::kCorrupt);
  EXPECT_EQ(completion_request_from_json(json{{"prompt", "x"}}).status().code(), Code::kCorrupt);
}

TEST(RunnerProtocol, ReaderHandlesSplitWritesTimeoutAndEof) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  FrameReader in(sv[0]);
  auto t = in.read(std::chrono::milliseconds(1));
  EXPECT_EQ(t.status().code(), Code::kUnavailable);

  const std::string frame = encode_frame(json{{"type", "ping"}});
  std::thread writer([&] {
    for (char c : frame) ASSERT_EQ(::write(sv[1], &c, 1), 1);
  });
  auto m = in.read(std::chrono::seconds(30));
  writer.join();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)["type"], "ping");

  ASSERT_TRUE(write_frame(sv[1], json{{"type", "pong"}}).is_ok());
  auto p = in.poll();
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((**p)["type"], "pong");

  ::close(sv[1]);
  EXPECT_EQ(in.read(std::chrono::seconds(30)).status().code(), Code::kIo);
  ::close(sv[0]);
}

}  // namespace
TEST(RunnerCommandLine, RoundTripsEveryLoadOption) {
  ChildArgs a{.fd = 3, .parent_pid = 42};
  a.load = {.model_path = "/m.gguf", .adapter_paths = {"/a"}, .projector_paths = {"/p"}, .num_ctx = 2048,
            .num_batch = 64, .num_thread = 2, .num_gpu = 0, .num_parallel = 4, .use_mmap = false};
  std::vector<std::string> args = runner_command_line(a);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  auto back = parse_runner_command_line(int(argv.size()), argv.data());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->fd, 3);
  EXPECT_EQ(back->parent_pid, 42);
  EXPECT_EQ(back->load.model_path, "/m.gguf");
  EXPECT_EQ(back->load.adapter_paths, a.load.adapter_paths);
  EXPECT_EQ(back->load.projector_paths, a.load.projector_paths);
  EXPECT_EQ(back->load.num_ctx, 2048);
  EXPECT_EQ(back->load.num_batch, 64);
  EXPECT_EQ(back->load.num_thread, 2);
  EXPECT_EQ(back->load.num_gpu, 0);
  EXPECT_EQ(back->load.num_parallel, 4);
  EXPECT_FALSE(back->load.use_mmap);

  std::vector<std::string> bad = {"runner", "--fd", "3", "--model", "m", "--parallel", "0"};
  std::vector<char*> bad_argv;
  for (auto& s : bad) bad_argv.push_back(s.data());
  EXPECT_FALSE(parse_runner_command_line(int(bad_argv.size()), bad_argv.data()).ok());
}

}  // namespace paddock::runner
