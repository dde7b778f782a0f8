// What /api/generate and /api/chat share: resolving options and the template, loading the
// model through the scheduler, the final chunk's metrics, and NDJSON streaming where an error
// after the first line becomes a last {"error": ...} line.
//   PADDOCK_ASSIGN(Prepared p, prepare(models, metrics, resolved, request, template_override, t0, gone));
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_util.h"
#include "server/generation.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/prompt.h"
#include "server/requests.h"
#include "server/scheduler.h"

namespace paddock::server {

struct Prepared {
  PromptTemplate tmpl;
  EffectiveOptions options;
  std::unique_ptr<Scheduler::Lease> lease;
  std::chrono::steady_clock::time_point t0;
  ServerMetrics* metrics = nullptr;
  std::string model;  // the scheduler's name for it, the metrics' model label
};

Result<Prepared> prepare(Scheduler& models, ServerMetrics& metrics, const ResolvedModel& model,
                         const InferenceCommon& request, const std::optional<std::string>& template_override,
                         std::chrono::steady_clock::time_point t0, const std::function<bool()>& client_gone);

// A chat request's prompt: the model's SYSTEM (unless the request starts with its own) and
// MESSAGE history, then the request's messages, rendered with its tools and think setting.
Result<std::string> chat_prompt(const PromptTemplate& t, const store::ModelInfo& info, const ChatRequest& req);

// chat_prompt fitted to the loaded context, as Ollama's chatPrompt does: when the whole prompt
// is longer than num_ctx tokens, whole messages are dropped from the front, the system
// messages and the last message always kept. When even those do not fit, the runner cuts
// tokens (CompletionChunk::truncated_tokens). With truncate:false a prompt that does not fit
// is a 400 naming both lengths.
struct FittedPrompt {
  std::string text;
  int64_t dropped_tokens = 0;  // the whole prompt's tokens minus the kept prompt's
};
Result<FittedPrompt> fit_chat_prompt(const Prepared& p, const store::ModelInfo& info, const ChatRequest& req);

// truncate:false on /api/generate: a 400 naming both lengths when `prompt` does not fit.
Status check_prompt_fits(const Prepared& p, const std::string& prompt);

// The runner request for a rendered prompt: sampling options, format, logprobs, cancellation.
runner::CompletionRequest completion_request(const Prepared& p, const InferenceCommon& request,
                                             std::string prompt, const std::function<bool()>& client_gone);

// The spec's thinking settings for a templated `prompt`: the template's tags (unless `think`
// turned thinking off), whether the prompt already ends with the opening tag, and the runner's
// ThinkingBudget when `think` has a budget: the closing tag and the blank line a template
// writes after it are forced once the budget is spent. A Harmony template's output goes to the
// Harmony parser instead, which splits thinking and tool calls both.
void set_thinking(const PromptTemplate& t, const Think& think, std::string_view prompt, GenerationSpec* spec);

// run_generation on the prepared model, recording its time to first output and its final
// counts in the metrics: every generating route (native, OpenAI, Anthropic) runs through here.
Status run_prepared(const Prepared& p, const GenerationSpec& spec, const EmitFn& emit);

// total/load/prompt_eval/eval metrics of the final chunk, added to `out` (with
// "prompt_cached_count" when `cached` is set: see HttpRequest::report_cached_tokens).
void add_metrics(const Prepared& p, const runner::CompletionChunk& final, bool cached, Json* out);
// "truncated": true and "prompt_tokens_dropped" (whole messages dropped before the runner plus
// the runner's cut) when the prompt lost anything; nothing otherwise.
void add_truncation(const GenerationSpec& spec, const runner::CompletionChunk& final, Json* out);
Json logprobs_json(const std::vector<runner::TokenLogprob>& lps);

// Streams NDJSON produced by `body`; send returns false once `http`'s client is gone (or a
// write failed), and the body should stop then. Cut by shutdown, the stream says so last.
using SendFn = std::function<bool(const Json&)>;
HttpResponse ndjson_stream(std::function<Status(const SendFn&)> body, const HttpRequest& http);
// Progress routes (create, pull, push): the NDJSON stream, or with stream:false only the last
// object (or the error with its status); either way the work stops when the client leaves.
HttpResponse progress_response(bool stream, std::function<Status(const SendFn&)> body,
                               const HttpRequest& http);

// A lease for `model` from the scheduler. Load failures become 500s with the runner's message;
// a full queue (503) and cancellation keep their codes.
Result<std::unique_ptr<Scheduler::Lease>> acquire_model(Scheduler& models, const ResolvedModel& model,
                                                        runner::LoadOptions load,
                                                        std::optional<Duration> keep_alive,
                                                        const std::function<bool()>& cancelled);

}  // namespace paddock::server

namespace paddock::server {
// /api/embed's vector: truncated to `dimensions` (0 = all), then L2-normalised.
Result<std::vector<float>> normalize_embedding(std::vector<float> v, int64_t dimensions);
}  // namespace paddock::server
