// Streaming one answer to the terminal, for run_once and the interactive prompt: thinking
// between "Thinking..." and "...done thinking.", the text word-wrapped on a terminal, a
// spinner until the first chunk, Ctrl+C (SIGINT) stopping the stream, --verbose timings.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "cli/progress.h"
#include "cli/repl.h"
#include "cli/repl_internal.h"
#include "cli/ui/format.h"
#include "cli/ui/wordwrap.h"

namespace paddock::cli {

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted = true; }
}  // namespace

void install_sigint_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking read returns so the prompt can react
  sigaction(SIGINT, &sa, nullptr);
}

bool take_interrupt() { return g_interrupted.exchange(false); }
bool interrupt_pending() { return g_interrupted.load(); }

nlohmann::json request_common(const RunOptions& opts) {
  nlohmann::json body = {{"model", opts.model}, {"stream", true}};
  if (!opts.format.empty()) body["format"] = opts.format;
  if (!opts.keep_alive.empty()) body["keep_alive"] = opts.keep_alive;
  if (!opts.think.is_null()) body["think"] = opts.think;
  if (!opts.options.empty()) body["options"] = opts.options;
  return body;
}

Result<StreamedAnswer> stream_answer(const HttpClient& client, const std::string& path,
                                     const nlohmann::json& body, const RunOptions& opts) {
  const bool tty = isatty(STDOUT_FILENO) != 0;
  ui::WordWrapper wrap(opts.wordwrap && tty ? terminal_width(STDOUT_FILENO) - 1 : 0);
  Spinner spinner(stderr);
  StreamedAnswer answer;
  bool thinking_open = false;
  take_interrupt();
  const Status s = client.stream(path, body, [&](const nlohmann::json& chunk) {
    spinner.stop();
    const nlohmann::json& msg = chunk.contains("message") ? chunk["message"] : chunk;
    const std::string thinking = msg.value("thinking", "");
    const std::string text = msg.value(chunk.contains("message") ? "content" : "response", "");
    if (!thinking.empty()) {
      answer.thinking += thinking;
      if (!opts.hide_thinking) {
        if (!thinking_open) std::fputs(tty ? "\x1b[90mThinking...\n" : "Thinking...\n", stdout);
        thinking_open = true;
        std::fputs(wrap.feed(thinking).c_str(), stdout);
      }
    }
    if (!text.empty()) {
      if (thinking_open) {
        std::fputs(wrap.finish().c_str(), stdout);
        std::fputs(tty ? "\n...done thinking.\x1b[0m\n\n" : "\n...done thinking.\n\n", stdout);
        thinking_open = false;
      }
      answer.content += text;
      std::fputs(wrap.feed(text).c_str(), stdout);
    }
    std::fflush(stdout);
    if (chunk.value("done", false)) answer.final_chunk = chunk;
    return !g_interrupted.load();
  });
  take_interrupt();  // consumed here: the next prompt must not see this Ctrl+C
  spinner.stop();
  std::fputs(wrap.finish().c_str(), stdout);
  if (thinking_open && tty) std::fputs("\x1b[0m", stdout);
  if (!s.is_ok() && s.code() != Code::kCancelled) {
    if (!answer.content.empty()) std::fputs("\n", stdout);
    return s;
  }
  answer.cancelled = !s.is_ok();
  if (!answer.content.empty() || answer.cancelled) std::fputs("\n", stdout);
  if (tty && !answer.content.empty()) std::fputs("\n", stdout);
  std::fflush(stdout);
  if (opts.verbose && !answer.final_chunk.is_null()) {
    std::fputs(ui::metrics_summary(answer.final_chunk).c_str(), stderr);
  }
  return answer;
}

int run_once(const HttpClient& client, const RunOptions& opts, const std::string& prompt) {
  install_sigint_handler();
  nlohmann::json body = request_common(opts);
  body["prompt"] = prompt;
  if (!opts.system.empty()) body["system"] = opts.system;
  const auto answer = stream_answer(client, "/api/generate", body, opts);
  if (!answer.ok()) return report_error(answer.status());
  return answer->cancelled ? 130 : 0;
}

}  // namespace paddock::cli
