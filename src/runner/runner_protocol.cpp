#include "runner/runner_protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace paddock::runner {

namespace {

using nlohmann::json;

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Images are raw bytes and JSON strings must be UTF-8, so they travel as base64.
std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kB64[(v >> s) & 63]);
  }
  if (i < in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= uint8_t(in[i + 1]) << 8;
    out.push_back(kB64[(v >> 18) & 63]);
    out.push_back(kB64[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kB64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

Result<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0) return corrupt("runner protocol: base64 length not a multiple of 4");
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = in[i + k];
      const char* p = c == '=' ? nullptr : std::strchr(kB64, c);
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        ++pad;
      } else if (p == nullptr || c == '\0' || pad > 0) {
        return corrupt("runner protocol: invalid base64 character");
      }
      v = (v << 6) | (p ? uint32_t(p - kB64) : 0u);
    }
    out.push_back(char(v >> 16));
    if (pad < 2) out.push_back(char((v >> 8) & 0xff));
    if (pad < 1) out.push_back(char(v & 0xff));
  }
  return out;
}

json logprob_to_json(const TokenLogprob& t) {
  json top = json::array();
  for (const auto& x : t.top) top.push_back(logprob_to_json(x));
  return {{"token", t.token}, {"logprob", t.logprob}, {"bytes", t.bytes}, {"top", std::move(top)}};
}

// Alternatives carry no alternatives of their own, so nesting stops at one level (a hostile
// peer cannot recurse the stack).
TokenLogprob logprob_from_json(const json& j, bool with_top = true) {
  TokenLogprob t;
  t.token = j.at("token").get<std::string>();
  t.logprob = j.at("logprob").get<double>();
  t.bytes = j.at("bytes").get<std::vector<uint8_t>>();
  if (with_top) {
    for (const auto& x : j.at("top")) t.top.push_back(logprob_from_json(x, false));
  }
  return t;
}

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <typename T>
void get(const json& j, const char* key, std::optional<T>& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) v = it->get<T>();
}

}  // namespace

std::string encode_frame(const json& message) {
  const std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out(4, '\0');
  const auto n = uint32_t(body.size());
  out[0] = char(n >> 24);
  out[1] = char((n >> 16) & 0xff);
  out[2] = char((n >> 8) & 0xff);
  out[3] = char(n & 0xff);
  return out + body;
}

Result<std::optional<json>> FrameDecoder::next() {
  const size_t avail = buffer_.size() - consumed_;
  if (avail < 4) return std::optional<json>();
  const auto* p = reinterpret_cast<const uint8_t*>(buffer_.data() + consumed_);
  const uint32_t n = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
  if (n == 0 || n > kMaxFrameBytes) {
    return corrupt("runner protocol: frame length " + std::to_string(n) + " outside 1.." +
                   std::to_string(kMaxFrameBytes));
  }
  if (avail - 4 < n) return std::optional<json>();
  json msg = json::parse(buffer_.begin() + std::ptrdiff_t(consumed_ + 4),
                         buffer_.begin() + std::ptrdiff_t(consumed_ + 4 + n), nullptr, false);
  consumed_ += 4 + n;
  if (consumed_ == buffer_.size() || consumed_ > (1u << 20)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  if (msg.is_discarded() || !msg.is_object()) return corrupt("runner protocol: frame is not a JSON object");
  if (!msg.contains("type") || !msg["type"].is_string())
    return corrupt("runner protocol: message has no type");
  return std::optional<json>(std::move(msg));
}

Status write_frame(int fd, const json& message) {
  const std::string frame = encode_frame(message);
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t w = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == ENOTSOCK) {  // a pipe: the caller ignores SIGPIPE
      const ssize_t pw = ::write(fd, frame.data() + done, frame.size() - done);
      if (pw < 0 && errno == EINTR) continue;
      if (pw <= 0) return io_error(std::string("runner protocol: write failed: ") + std::strerror(errno));
      done += size_t(pw);
      continue;
    }
    if (w <= 0) return io_error(std::string("runner protocol: write failed: ") + std::strerror(errno));
    done += size_t(w);
  }
  return Status::ok();
}

Status FrameReader::fill(int timeout_ms) {
  pollfd pfd{fd_, POLLIN, 0};
  int r;
  do {
    r = ::poll(&pfd, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return io_error(std::string("runner protocol: poll failed: ") + std::strerror(errno));
  if (r == 0) return Status(Code::kUnavailable, std::string(kTimeoutMessage));
  char buf[65536];
  ssize_t n;
  do {
    n = ::read(fd_, buf, sizeof(buf));
  } while (n < 0 && errno == EINTR);
  if (n == 0) return io_error("runner protocol: connection closed");
  if (n < 0) return io_error(std::string("runner protocol: read failed: ") + std::strerror(errno));
  decoder_.feed(std::string_view(buf, size_t(n)));
  return Status::ok();
}

Result<json> FrameReader::read(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    PADDOCK_ASSIGN(std::optional<json> msg, decoder_.next());
    if (msg) return std::move(*msg);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    PADDOCK_TRY(fill(int(std::max<int64_t>(0, std::min<int64_t>(left.count(), 1 << 30)))));
  }
}

Result<std::optional<json>> FrameReader::poll() {
  PADDOCK_ASSIGN(std::optional<json> msg, decoder_.next());
  if (msg) return msg;
  Status s = fill(0);
  if (!s.is_ok()) {
    if (s.code() == Code::kUnavailable) return std::optional<json>();
    return s;
  }
  return decoder_.next();
}

json to_json(const CompletionRequest& r) {
  json o = json::object();
  put(o, "temperature", r.options.temperature);
  put(o, "top_p", r.options.top_p);
  put(o, "min_p", r.options.min_p);
  put(o, "typical_p", r.options.typical_p);
  put(o, "repeat_penalty", r.options.repeat_penalty);
  put(o, "presence_penalty", r.options.presence_penalty);
  put(o, "frequency_penalty", r.options.frequency_penalty);
  put(o, "top_k", r.options.top_k);
  put(o, "repeat_last_n", r.options.repeat_last_n);
  put(o, "seed", r.options.seed);
  put(o, "num_predict", r.options.num_predict);
  put(o, "num_keep", r.options.num_keep);
  o["stop"] = r.options.stop;
  json images = json::array();
  for (const auto& img : r.images) images.push_back(base64_encode(img));
  json out = {{"prompt", r.prompt},
              {"tokens", r.tokens},
              {"images", std::move(images)},
              {"options", std::move(o)},
              {"format", r.format},
              {"grammar", r.grammar},
              {"logprobs", r.logprobs},
              {"top_logprobs", r.top_logprobs}};
  if (const auto& b = r.thinking_budget) {
    out["thinking_budget"] = {{"max_tokens", b->max_tokens},
                              {"open", b->open},
                              {"close", b->close},
                              {"starts_inside", b->starts_inside}};
  }
  return out;
}

Result<CompletionRequest> completion_request_from_json(const json& j) {
  try {
    CompletionRequest r;
    r.prompt = j.at("prompt").get<std::string>();
    r.tokens = j.at("tokens").get<std::vector<int32_t>>();
    for (const auto& img : j.at("images")) {
      PADDOCK_ASSIGN(std::string bytes, base64_decode(img.get<std::string>()));
      r.images.push_back(std::move(bytes));
    }
    const json& o = j.at("options");
    get(o, "temperature", r.options.temperature);
    get(o, "top_p", r.options.top_p);
    get(o, "min_p", r.options.min_p);
    get(o, "typical_p", r.options.typical_p);
    get(o, "repeat_penalty", r.options.repeat_penalty);
    get(o, "presence_penalty", r.options.presence_penalty);
    get(o, "frequency_penalty", r.options.frequency_penalty);
    get(o, "top_k", r.options.top_k);
    get(o, "repeat_last_n", r.options.repeat_last_n);
    get(o, "seed", r.options.seed);
    get(o, "num_predict", r.options.num_predict);
    get(o, "num_keep", r.options.num_keep);
    r.options.stop = o.at("stop").get<std::vector<std::string>>();
    r.format = j.at("format").get<std::string>();
    r.grammar = j.at("grammar").get<std::string>();
    r.logprobs = j.at("logprobs").get<bool>();
    r.top_logprobs = j.at("top_logprobs").get<int>();
    if (const auto b = j.find("thinking_budget"); b != j.end()) {
      r.thinking_budget = ThinkingBudget{.max_tokens = b->at("max_tokens").get<int64_t>(),
                                         .open = b->at("open").get<std::string>(),
                                         .close = b->at("close").get<std::string>(),
                                         .starts_inside = b->at("starts_inside").get<bool>()};
    }
    return r;
  } catch (const json::exception& e) {
    return corrupt(std::string("runner protocol: bad completion request: ") + e.what());
  }
}

json to_json(const CompletionChunk& c) {
  json lp = json::array();
  for (const auto& t : c.logprobs) lp.push_back(logprob_to_json(t));
  return {{"text", c.text},
          {"logprobs", std::move(lp)},
          {"done", c.done},
          {"done_reason", c.done_reason},
          {"prompt_eval_count", c.prompt_eval_count},
          {"prompt_cached_count", c.prompt_cached_count},
          {"prompt_eval_duration_ns", c.prompt_eval_duration_ns},
          {"eval_count", c.eval_count},
          {"eval_duration_ns", c.eval_duration_ns},
          {"truncated_tokens", c.truncated_tokens},
          {"stop_sequence", c.stop_sequence}};
}

Result<CompletionChunk> completion_chunk_from_json(const json& j) {
  try {
    CompletionChunk c;
    c.text = j.at("text").get<std::string>();
    for (const auto& t : j.at("logprobs")) c.logprobs.push_back(logprob_from_json(t));
    c.done = j.at("done").get<bool>();
    c.done_reason = j.at("done_reason").get<std::string>();
    c.prompt_eval_count = j.at("prompt_eval_count").get<int64_t>();
    c.prompt_cached_count = j.at("prompt_cached_count").get<int64_t>();
    c.prompt_eval_duration_ns = j.at("prompt_eval_duration_ns").get<int64_t>();
    c.eval_count = j.at("eval_count").get<int64_t>();
    c.eval_duration_ns = j.at("eval_duration_ns").get<int64_t>();
    c.truncated_tokens = j.at("truncated_tokens").get<int64_t>();
    c.stop_sequence = j.at("stop_sequence").get<std::string>();
    return c;
  } catch (const json::exception& e) {
    return corrupt(std::string("runner protocol: bad chunk: ") + e.what());
  }
}

json to_json(const ModelFacts& f) {
  return {{"context_length", f.context_length}, {"trained_context_length", f.trained_context_length},
          {"has_vision", f.has_vision},         {"embedding_only", f.embedding_only},
          {"memory_bytes", f.memory_bytes},     {"device_memory_bytes", f.device_memory_bytes}};
}

Result<ModelFacts> model_facts_from_json(const json& j) {
  try {
    ModelFacts f;
    f.context_length = j.at("context_length").get<int64_t>();
    f.trained_context_length = j.at("trained_context_length").get<int64_t>();
    f.has_vision = j.at("has_vision").get<bool>();
    f.embedding_only = j.at("embedding_only").get<bool>();
    f.memory_bytes = j.at("memory_bytes").get<uint64_t>();
    f.device_memory_bytes = j.at("device_memory_bytes").get<uint64_t>();
    return f;
  } catch (const json::exception& e) {
    return corrupt(std::string("runner protocol: bad model facts: ") + e.what());
  }
}

json error_message(const Status& s) {
  return {{"type", "error"}, {"code", int(s.code())}, {"message", s.message()}};
}

Status status_from_error(const json& j) {
  const auto c = j.find("code");
  const auto m = j.find("message");
  const int code = c != j.end() && c->is_number_integer() ? c->get<int>() : int(Code::kInternal);
  std::string message = m != j.end() && m->is_string() ? m->get<std::string>() : "runner error";
  if (code <= 0 || code > int(Code::kInternal)) return internal_error(std::move(message));
  return Status(Code(code), std::move(message));
}

}  // namespace paddock::runner
