// The wire protocol between the server and a `paddock runner` child process: frames of a
// 4-byte big-endian length followed by that many bytes of one JSON object, over a private
// socketpair (no listening port, so no secret is needed). Every message has a "type".
// Invariants: a frame is 1..kMaxFrameBytes long and holds a JSON object, anything else is
// kCorrupt and the connection is dropped; strings that are not UTF-8 are sent with U+FFFD.
//   parent -> child: complete{request} | cancel | embed{texts,truncate} | tokenize{text} |
//                    detokenize{tokens} | facts | ping
//   child -> parent: loaded{facts} | chunk{chunk} | done{chunk} | result{...} | pong | error{code,message}
//   FrameReader in(fd); PADDOCK_TRY(write_frame(fd, {{"type", "ping"}}));
//   PADDOCK_ASSIGN(auto msg, in.read(std::chrono::seconds(10)));
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "runner/runner.h"

namespace paddock::runner {

inline constexpr uint32_t kMaxFrameBytes = 256u << 20;  // images and embeddings fit; garbage does not

// Length prefix + serialised object.
std::string encode_frame(const nlohmann::json& message);

// Splits a byte stream into messages; bytes may arrive in any pieces.
class FrameDecoder {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete message, nullopt when more bytes are needed, kCorrupt on a bad frame.
  Result<std::optional<nlohmann::json>> next();
  bool empty() const { return buffer_.size() == consumed_; }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
};

// Writes one whole frame (retries short writes and EINTR; never raises SIGPIPE).
Status write_frame(int fd, const nlohmann::json& message);

// Reads frames from a file descriptor it does not own.
class FrameReader {
 public:
  explicit FrameReader(int fd) : fd_(fd) {}
  // kUnavailable "timeout" when nothing complete arrived within `timeout`, kIo on EOF or a
  // read error, kCorrupt on a bad frame.
  Result<nlohmann::json> read(std::chrono::milliseconds timeout);
  // A message that is already buffered or readable without blocking, else nullopt.
  Result<std::optional<nlohmann::json>> poll();

 private:
  Status fill(int timeout_ms);
  int fd_;
  FrameDecoder decoder_;
};

inline constexpr std::string_view kTimeoutMessage = "timeout";

// Message bodies. The Runner types are converted field by field; is_cancelled is not sent.
nlohmann::json to_json(const CompletionRequest& r);
Result<CompletionRequest> completion_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CompletionChunk& c);
Result<CompletionChunk> completion_chunk_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ModelFacts& f);
Result<ModelFacts> model_facts_from_json(const nlohmann::json& j);

// An error message for the peer, and back: {"type":"error","code":N,"message":"..."}.
nlohmann::json error_message(const Status& s);
Status status_from_error(const nlohmann::json& j);

}  // namespace paddock::runner
