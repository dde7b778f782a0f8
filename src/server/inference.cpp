#include "server/inference.h"

#include "base/log.h"

namespace paddock::server {

Result<Prepared> prepare(Scheduler& models, ServerMetrics& metrics, const ResolvedModel& model,
                         const InferenceCommon& request, const std::optional<std::string>& template_override,
                         std::chrono::steady_clock::time_point t0, const std::function<bool()>& client_gone) {
  Prepared p;
  p.t0 = t0;
  p.metrics = &metrics;
  p.model = model.key.name;
  auto tmpl = choose_template(template_override, model.info.template_text, model.info.model_path);
  if (!tmpl.ok()) return internal_error(tmpl.status().message());
  p.tmpl = std::move(tmpl).value();
  if (request.think.set && request.think.enabled && !p.tmpl.supports_thinking()) {
    return invalid_argument("\"" + request.model + "\" does not support thinking");
  }
  if (p.tmpl.harmony && request.think.set && !request.think.enabled) {
    // As Ollama answers for gpt-oss: its reasoning stays on (at the template's default effort).
    log_warn("\"" + request.model +
             "\" does not support turning off thinking; use think \"low\" for the least");
  }
  PADDOCK_ASSIGN(p.options, effective_options(model.info.params, request.options));
  runner::LoadOptions load;
  load.num_ctx = p.options.num_ctx;
  load.num_batch = p.options.num_batch;
  load.num_thread = p.options.num_thread;
  load.num_gpu = p.options.num_gpu;
  PADDOCK_ASSIGN(p.lease, acquire_model(models, model, std::move(load), request.keep_alive, client_gone));
  return p;
}

Result<std::unique_ptr<Scheduler::Lease>> acquire_model(Scheduler& models, const ResolvedModel& model,
                                                        runner::LoadOptions load,
                                                        std::optional<Duration> keep_alive,
                                                        const std::function<bool()>& cancelled) {
  load.model_path = model.info.model_path;
  load.adapter_paths = model.info.adapter_paths;
  load.projector_paths = model.info.projector_paths;
  auto lease = models.acquire(model.key, load, keep_alive, cancelled);
  if (!lease.ok() && lease.status().code() != Code::kCancelled && lease.status().code() != Code::kUnavailable)
    return internal_error(lease.status().message());
  return lease;
}

namespace {

// The model's SYSTEM (unless the request starts with its own) and MESSAGE history, then the
// request's messages.
std::vector<chat::Message> chat_messages(const store::ModelInfo& info, const ChatRequest& req) {
  std::vector<chat::Message> messages;
  const bool has_system = !req.messages.empty() && req.messages.front().role == "system";
  if (!has_system && !info.system.empty()) {
    messages.push_back(chat::Message{.role = "system", .content = info.system});
  }
  for (const store::Message& m : info.messages) {
    messages.push_back(chat::Message{.role = m.role, .content = m.content});
  }
  for (const chat::Message& m : req.messages) messages.push_back(m);
  return messages;
}

// The system messages before `start`, then every message from `start` on.
std::vector<chat::Message> kept_from(const std::vector<chat::Message>& messages, size_t start) {
  std::vector<chat::Message> kept;
  for (size_t i = 0; i < start; ++i) {
    if (messages[i].role == "system") kept.push_back(messages[i]);
  }
  kept.insert(kept.end(), messages.begin() + static_cast<std::ptrdiff_t>(start), messages.end());
  return kept;
}

Result<int64_t> count_tokens(const Prepared& p, const std::string& text) {
  PADDOCK_ASSIGN(std::vector<int32_t> tokens, p.lease->runner().tokenize(text));
  return static_cast<int64_t>(tokens.size());
}

int64_t context_length(const Prepared& p) { return p.lease->runner().facts().context_length; }

}  // namespace

Result<std::string> chat_prompt(const PromptTemplate& t, const store::ModelInfo& info,
                                const ChatRequest& req) {
  return render_messages(t, chat_messages(info, req), req.tools, req.think);
}

Result<FittedPrompt> fit_chat_prompt(const Prepared& p, const store::ModelInfo& info,
                                     const ChatRequest& req) {
  const std::vector<chat::Message> messages = chat_messages(info, req);
  auto render = [&](const std::vector<chat::Message>& m) -> Result<std::string> {
    auto text = render_messages(p.tmpl, m, req.tools, req.think);
    if (!text.ok()) return internal_error(text.status().message());
    return text;
  };
  PADDOCK_ASSIGN(std::string whole, render(messages));
  PADDOCK_ASSIGN(const int64_t whole_tokens, count_tokens(p, whole));
  const int64_t num_ctx = context_length(p);
  if (whole_tokens <= num_ctx) return FittedPrompt{.text = std::move(whole)};
  if (!req.truncate) return invalid_argument(runner::context_exceeded_message(whole_tokens, num_ctx));
  // Walks back from the last message (always kept), taking earlier ones while the prompt fits;
  // from the first message on it is the whole prompt, which did not.
  FittedPrompt fitted;
  int64_t fitted_tokens = -1;
  for (size_t start = messages.size() - 1; start-- > 1;) {
    PADDOCK_ASSIGN(std::string text, render(kept_from(messages, start)));
    PADDOCK_ASSIGN(const int64_t tokens, count_tokens(p, text));
    if (tokens > num_ctx) break;
    fitted.text = std::move(text);
    fitted_tokens = tokens;
  }
  if (fitted_tokens < 0) {  // not even the system messages and the last one fit
    PADDOCK_ASSIGN(fitted.text, render(kept_from(messages, messages.size() - 1)));
    PADDOCK_ASSIGN(fitted_tokens, count_tokens(p, fitted.text));
  }
  fitted.dropped_tokens = whole_tokens - fitted_tokens;
  return fitted;
}

Status check_prompt_fits(const Prepared& p, const std::string& prompt) {
  PADDOCK_ASSIGN(const int64_t tokens, count_tokens(p, prompt));
  const int64_t num_ctx = context_length(p);
  if (tokens > num_ctx) return invalid_argument(runner::context_exceeded_message(tokens, num_ctx));
  return Status::ok();
}

runner::CompletionRequest completion_request(const Prepared& p, const InferenceCommon& request,
                                             std::string prompt, const std::function<bool()>& client_gone) {
  runner::CompletionRequest r;
  r.prompt = std::move(prompt);
  r.options = p.options.sampling;
  if (request.format.is_string()) r.format = request.format.get<std::string>();
  if (request.format.is_object()) r.format = request.format.dump();
  r.logprobs = request.logprobs || request.top_logprobs > 0;
  r.top_logprobs = request.top_logprobs;
  r.is_cancelled = client_gone;
  return r;
}

void set_thinking(const PromptTemplate& t, const Think& think, std::string_view prompt,
                  GenerationSpec* spec) {
  if (t.harmony) {
    spec->harmony = true;
    if (think.budget >= 0) {
      // The analysis message is closed and the final one opened, as Ollama's ThinkingClose has it.
      spec->request.thinking_budget =
          runner::ThinkingBudget{.max_tokens = think.budget,
                                 .open = "<|channel|>analysis<|message|>",
                                 .close = "<|end|><|start|>assistant<|channel|>final<|message|>",
                                 .starts_inside = false};
    }
    return;
  }
  const auto& [open, close] = t.think_tags;
  if (open.empty() || (think.set && !think.enabled)) return;
  spec->think_tags = t.think_tags;
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ')) prompt.remove_suffix(1);
  spec->prompt_opens_thinking = prompt.ends_with(open);
  if (think.budget >= 0) {
    spec->request.thinking_budget = runner::ThinkingBudget{.max_tokens = think.budget,
                                                           .open = open,
                                                           .close = close + "\n\n",
                                                           .starts_inside = spec->prompt_opens_thinking};
  }
}

Status run_prepared(const Prepared& p, const GenerationSpec& spec, const EmitFn& emit) {
  bool first = true;
  return run_generation(p.lease->runner(), spec, [&](const GenerationEvent& e) {
    // An empty generation has no first output to time.
    if (first && (!e.done || e.final.eval_count > 0)) {
      p.metrics->first_token(p.model,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - p.t0).count());
    }
    first = false;
    if (e.done) {
      p.metrics->generation_done(p.model, e.final);
      // generation_done counts a prompt the runner cut; one that only lost whole messages counts
      // here, so a request counts once.
      if (spec.dropped_tokens > 0 && e.final.truncated_tokens == 0) p.metrics->prompt_truncated(p.model);
    }
    return emit(e);
  });
}

void add_metrics(const Prepared& p, const runner::CompletionChunk& final, bool cached, Json* out) {
  (*out)["total_duration"] = ns_since(p.t0);
  (*out)["load_duration"] = p.lease ? p.lease->load_duration_ns() : 0;
  (*out)["prompt_eval_count"] = final.prompt_eval_count;
  (*out)["prompt_eval_duration"] = final.prompt_eval_duration_ns;
  (*out)["eval_count"] = final.eval_count;
  (*out)["eval_duration"] = final.eval_duration_ns;
  if (cached) (*out)["prompt_cached_count"] = final.prompt_cached_count;
}

void add_truncation(const GenerationSpec& spec, const runner::CompletionChunk& final, Json* out) {
  const int64_t dropped = spec.dropped_tokens + final.truncated_tokens;
  if (dropped == 0) return;
  (*out)["truncated"] = true;
  (*out)["prompt_tokens_dropped"] = dropped;
}

Json logprobs_json(const std::vector<runner::TokenLogprob>& lps) {
  Json out = Json::array();
  for (const runner::TokenLogprob& lp : lps) {
    Json j{{"token", lp.token}, {"logprob", lp.logprob}};
    if (!lp.bytes.empty()) j["bytes"] = lp.bytes;
    if (!lp.top.empty()) j["top_logprobs"] = logprobs_json(lp.top);
    out.push_back(std::move(j));
  }
  return out;
}

HttpResponse progress_response(bool stream, std::function<Status(const SendFn&)> body,
                               const HttpRequest& http) {
  if (stream) return ndjson_stream(std::move(body), http);
  Json last;
  const Status s = body([&](const Json& j) {
    last = j;
    return !(http.client_gone && http.client_gone());
  });
  if (!s.is_ok()) return error_response(s);
  return json_response(200, last);
}

HttpResponse ndjson_stream(std::function<Status(const SendFn&)> body, const HttpRequest& http) {
  HttpResponse r;
  r.content_type = kNdjson;
  r.stream = [body = std::move(body), gone = http.client_gone,
              shutting_down = http.shutting_down](const WriteFn& write) {
    bool open = true;
    const SendFn send = [&](const Json& j) {
      open = open && write(j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
      return open && !(gone && gone());
    };
    const Status s = body(send);
    if (s.is_ok() || !open) return;
    if (s.code() != Code::kCancelled) {
      send(Json{{"error", public_message(s.message())}});
    } else if (shutting_down && shutting_down()) {
      send(Json{{"error", kShuttingDownMessage}});
    }
  };
  return r;
}

}  // namespace paddock::server
