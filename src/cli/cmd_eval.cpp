// `paddock eval`: the golden-data interface. Evaluates prompts as one batch, then decodes
// greedily one token at a time, and prints one JSON line per prompt in the format of
// ../shared/fixtures/golden/*.logits.jsonl (see the fixtures README), so that
// tools/compare_golden.py can check our numbers against llama.cpp's. With --parallel N the
// prompts run as N concurrent sequences sharing each forward pass (same output).
// An embedding model (no LM head) prints instead, per prompt, its ids (the prompt tokenised
// here) and its pooled, L2-normalised embedding, as golden/*.embed.jsonl hold them.
// Generation mode (--prompt TEXT) samples with the engine and prints the text only.
// --dump-tensors OUT writes every named node of one pass over the prompt (cli/dump_tensors.h).
//   paddock eval --model m.gguf --teacher-force m.logits.jsonl --backend ref --json
//   paddock eval --model m.gguf --prompt "Once upon a time" -n 32 --temperature 0
//   paddock eval --model m.gguf --dump-tensors m.layers.jsonl
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/placement.h"
#include "backend/ref/ref_backend.h"
#include "backend/split_backend.h"
#if PADDOCK_HAVE_VULKAN
#include "backend/vulkan/vulkan_backend.h"
#endif
#include "base/mapped_file.h"
#include "cli/commands.h"
#include "cli/dump_tensors.h"
#include "engine/completion.h"
#include "engine/embedding.h"
#include "engine/loaded_model.h"
#include "gguf/gguf.h"
#include "kv/kv_cache.h"
#include "gguf/keys.h"
#include "model/registry.h"
#include "model/weights.h"
#include "server/inference.h"
#include "tokenizer/tokenizer.h"

namespace paddock::cli {

namespace {

constexpr const char* kUsage =
    "Usage: paddock eval --model FILE (--prompt-file FILE | --teacher-force GOLDEN.jsonl) [--greedy N]\n"
    "                    [--top K] [--ctx N] [--parallel N] [--backend B] [--num-gpu N] [--threads N] --json\n"
    "       paddock eval --model FILE --prompt TEXT [-n N] [--seed S] [--temperature T] [--top-k K]\n"
    "                    [--top-p P] [--min-p P] [--repeat-penalty R] [--format json|SCHEMA_FILE]\n"
    "                    [--grammar FILE] [--ignore-eos] [--ctx N] [--backend ref|cpu] [--threads N]\n"
    "       paddock eval --model FILE --dump-tensors OUT.jsonl [--prompt TEXT] [--backend B] [--num-gpu N] "
    "[--threads N]\n"
    "Golden and dump modes take --backend ref (default), cpu, vulkan (every part on the GPU that\n"
    "PADDOCK_VULKAN_DEVICE names, else the first), cpu+vulkan or cpu+ref: the last --num-gpu layers\n"
    "(the output counted as one more) on vulkan, or on ref standing in for an accelerator, the rest\n"
    "and the input on cpu; without --num-gpu, as many as fit.\n";
constexpr const char* kDumpPrompt = "Once upon a time";  // the golden layer dumps' prompt
// Full logits are printed only for vocabularies up to this size, as in the golden files.
constexpr int64_t kMaxFullLogits = 4096;
constexpr size_t kStepTop = 5;
constexpr size_t kRefDequantCacheBytes = size_t{512} << 20;
constexpr int64_t kGoldenCtx = 1024;  // the golden files' n_ctx

struct EvalOptions {
  std::string model;
  std::string prompt_file;
  std::string teacher_force;
  std::string dump_tensors;
  int64_t greedy = 32;
  int64_t top = 20;
  std::optional<int64_t> ctx;  // golden modes: 1024 (as the golden files); generation: the engine's default
  int64_t parallel = 1;
  std::string backend;  // golden modes: ref; generation: cpu
  std::optional<int64_t> num_gpu;  // cpu+ref: layers on ref
  int64_t threads = 0;
  bool json = false;
  // Generation mode.
  std::optional<std::string> prompt;
  int64_t n_predict = -1;
  sample::SamplerParams sampling = engine::default_sampler_params();
  std::string format_arg;
  std::string grammar_file;
  bool ignore_eos = false;
};

struct Entry {
  std::string prompt;
  std::vector<int32_t> ids;
  std::vector<int32_t> forced;  // tokens fed during decoding (teacher forcing), else empty
};

struct EntryResult {
  std::vector<std::pair<int32_t, float>> top;
  std::vector<float> logits;  // empty when the vocabulary is too large
  std::vector<int32_t> greedy;
  std::vector<float> margins;
  std::vector<std::vector<std::pair<int32_t, float>>> steps;
};

Result<int64_t> parse_count(const std::string& flag, const char* v, int64_t min) {
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || n < min || n > (int64_t{1} << 30)) {
    return invalid_argument(flag + ": expected an integer >= " + std::to_string(min) + ", found \"" + v +
                            "\"");
  }
  return static_cast<int64_t>(n);
}

Result<float> parse_float(const std::string& flag, const char* v) {
  char* end = nullptr;
  const float f = std::strtof(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(f)) {
    return invalid_argument(flag + ": expected a number, found \"" + v + "\"");
  }
  return f;
}

Result<EvalOptions> parse_args(int argc, char** argv) {
  EvalOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      o.json = true;
      continue;
    }
    if (a == "--ignore-eos") {
      o.ignore_eos = true;
      continue;
    }
    if (i + 1 >= argc) return invalid_argument("flag " + a + " needs a value (or is unknown)\n" + kUsage);
    const char* v = argv[++i];
    if (a == "--model") {
      o.model = v;
    } else if (a == "--prompt-file") {
      o.prompt_file = v;
    } else if (a == "--teacher-force") {
      o.teacher_force = v;
    } else if (a == "--dump-tensors") {
      o.dump_tensors = v;
    } else if (a == "--greedy") {
      PADDOCK_ASSIGN(o.greedy, parse_count(a, v, 0));
    } else if (a == "--top") {
      PADDOCK_ASSIGN(o.top, parse_count(a, v, 1));
    } else if (a == "--ctx") {
      PADDOCK_ASSIGN(o.ctx, parse_count(a, v, 1));
    } else if (a == "--parallel") {
      PADDOCK_ASSIGN(o.parallel, parse_count(a, v, 1));
    } else if (a == "--threads") {
      PADDOCK_ASSIGN(o.threads, parse_count(a, v, 1));
    } else if (a == "--backend") {
      o.backend = v;
    } else if (a == "--num-gpu") {
      PADDOCK_ASSIGN(o.num_gpu, parse_count(a, v, 0));
    } else if (a == "--prompt") {
      o.prompt = v;
    } else if (a == "-n" || a == "--n-predict") {
      PADDOCK_ASSIGN(o.n_predict, parse_count(a, v, -2));
    } else if (a == "--seed") {
      PADDOCK_ASSIGN(o.sampling.seed, parse_count(a, v, -1));
    } else if (a == "--temperature" || a == "--temp") {
      PADDOCK_ASSIGN(o.sampling.temperature, parse_float(a, v));
    } else if (a == "--top-k") {
      PADDOCK_ASSIGN(const int64_t k, parse_count(a, v, 0));
      o.sampling.top_k = static_cast<int32_t>(k);
    } else if (a == "--top-p") {
      PADDOCK_ASSIGN(o.sampling.top_p, parse_float(a, v));
    } else if (a == "--min-p") {
      PADDOCK_ASSIGN(o.sampling.min_p, parse_float(a, v));
    } else if (a == "--repeat-penalty") {
      PADDOCK_ASSIGN(o.sampling.repeat_penalty, parse_float(a, v));
    } else if (a == "--format") {
      o.format_arg = v;
    } else if (a == "--grammar") {
      o.grammar_file = v;
    } else {
      return invalid_argument("unknown flag " + a + "\n" + kUsage);
    }
  }
  if (o.model.empty()) return invalid_argument(std::string("--model is required\n") + kUsage);
  if (!o.dump_tensors.empty()) {
    if (!o.prompt_file.empty() || !o.teacher_force.empty() || o.json) {
      return invalid_argument(std::string("--dump-tensors writes its own file: it takes no --prompt-file, "
                                          "--teacher-force or --json\n") +
                              kUsage);
    }
    return o;
  }
  if (o.prompt) {
    if (!o.prompt_file.empty() || !o.teacher_force.empty() || o.json) {
      return invalid_argument(std::string("--prompt prints generated text: it takes no --prompt-file, "
                                          "--teacher-force or --json\n") +
                              kUsage);
    }
    return o;
  }
  if (o.prompt_file.empty() == o.teacher_force.empty()) {
    return invalid_argument(std::string("expected exactly one of --prompt-file and --teacher-force\n") +
                            kUsage);
  }
  if (!o.json) return invalid_argument(std::string("only --json output exists; pass --json\n") + kUsage);
  return o;
}

Result<std::unique_ptr<Backend>> make_backend(const std::string& name, int64_t threads) {
  // One backend per model here, so the ref backend may keep dequantized weights: decoding
  // then costs one dequantization per matrix instead of one per step.
  if (name == "ref") return make_ref_backend({.dequant_cache_bytes = kRefDequantCacheBytes});
  if (name == "cpu") return make_cpu_backend(static_cast<int>(threads));
#if PADDOCK_HAVE_VULKAN
  if (name == "vulkan") return make_vulkan_backend("");
#else
  if (name == "vulkan") return unsupported("this paddock was built without Vulkan (needs libvulkan-dev and glslc)");
#endif
  return invalid_argument("unknown backend \"" + name + "\" (expected ref, cpu, vulkan, cpu+vulkan or cpu+ref)");
}

// cpu+vulkan places layers across the CPU and the GPU (backend/placement.h); cpu+ref the same
// with ref in the accelerator's seat: the proof that a pass split across backends gives the
// same numbers.
Result<std::unique_ptr<Backend>> make_eval_backend(const EvalOptions& o, const gguf::File& file) {
  const std::string name = o.backend.empty() ? "ref" : o.backend;
  if (name != "cpu+ref" && name != "cpu+vulkan") {
    if (o.num_gpu) return invalid_argument("--num-gpu needs --backend cpu+vulkan or cpu+ref");
    return make_backend(name, o.threads);
  }
  const std::string_view arch = file.get_string("general.architecture").value_or("");
  PADDOCK_ASSIGN(const int64_t n_layer, gguf::KeyReader(file, arch).required_int("block_count"));
  std::vector<std::unique_ptr<Backend>> bs;
  PADDOCK_ASSIGN(std::unique_ptr<Backend> cpu, make_backend("cpu", o.threads));
  PADDOCK_ASSIGN(std::unique_ptr<Backend> accel, make_backend(name.substr(4), o.threads));
  bs.push_back(std::move(cpu));
  bs.push_back(std::move(accel));
  int64_t n_offload = 0;
  if (o.num_gpu) {
    n_offload = *o.num_gpu;
  } else {
    // The pass's compute buffer stays on cpu (the input's backend); the accelerator holds its
    // layers' weights and KV cells.
    FitRequest fit = offload_weights(file, n_layer);
    fit.free = bs[1]->device().memory().free;
    n_offload = fit_offload(fit);
  }
  return make_split_backend(std::move(bs), Placement::offload(n_layer, n_offload, 0, 1));
}

Result<std::vector<int32_t>> int_array(const nlohmann::json& j, const char* key, size_t line) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) {
    return corrupt("line " + std::to_string(line) + ": expected \"" + key + "\" to be an array of token ids");
  }
  std::vector<int32_t> out;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < INT32_MIN || v.get<int64_t>() > INT32_MAX) {
      return corrupt("line " + std::to_string(line) + ": \"" + key + "\" holds a non-integer or huge value");
    }
    out.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return out;
}

// The prompts' ids and the tokens to feed, from a golden file: one JSON object per line.
Result<std::vector<Entry>> read_teacher_file(const std::string& path) {
  PADDOCK_ASSIGN(const std::string text, read_file(path));
  std::vector<Entry> entries;
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return corrupt(path + ": line " + std::to_string(line_no) + ": expected a JSON object");
    }
    Entry e;
    if (const auto p = j.find("prompt"); p != j.end() && p->is_string()) e.prompt = p->get<std::string>();
    PADDOCK_ASSIGN(e.ids, int_array(j, "ids", line_no));
    if (j.contains("greedy")) {  // embed files have none
      PADDOCK_ASSIGN(e.forced, int_array(j, "greedy", line_no));
    }
    if (e.ids.empty()) return corrupt(path + ": line " + std::to_string(line_no) + ": \"ids\" is empty");
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<std::pair<int32_t, float>> top_k(const std::vector<float>& logits, size_t k) {
  std::vector<int32_t> idx(logits.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, idx.size());
  // Ties go to the lower id, as an argmax scanning upwards would choose.
  std::partial_sort(
      idx.begin(), idx.begin() + static_cast<ptrdiff_t>(k), idx.end(),
      [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  std::vector<std::pair<int32_t, float>> out;
  for (size_t i = 0; i < k; ++i) out.emplace_back(idx[i], logits[idx[i]]);
  return out;
}

// One prompt in flight: its cache slot, the steps done, and the logits to choose from next.
struct InFlight {
  size_t entry = 0;
  size_t slot = 0;
  EntryResult result;
  std::vector<float> logits;
  int32_t next = 0;
  int32_t pos = 0;
};

// Records the step chosen from `f.logits`; returns whether the entry needs more steps.
bool record_step(InFlight& f, const Entry& e, const EvalOptions& o) {
  auto best = top_k(f.logits, kStepTop);
  const auto step = static_cast<int64_t>(f.result.greedy.size());
  f.result.greedy.push_back(best[0].first);
  f.result.margins.push_back(best.size() > 1 ? best[0].second - best[1].second : 0.0f);
  f.result.steps.push_back(std::move(best));
  if (step + 1 >= o.greedy) return false;
  const auto k = static_cast<size_t>(step);
  f.next = k < e.forced.size() ? e.forced[k] : f.result.greedy.back();
  return true;
}

// Evaluates the entries as o.parallel concurrent sequences: each pass holds the whole prompts
// of newly started entries and one decode token of every other entry in flight, so weights
// are read once per pass for all of them. With --parallel 1 this is the plain loop.
Result<std::vector<EntryResult>> evaluate_all(const Model& model, Backend& be, std::vector<KvCache>& slots,
                                              const std::vector<Entry>& entries, const EvalOptions& o) {
  std::vector<EntryResult> results(entries.size());
  std::vector<InFlight> flying;
  std::vector<size_t> free_slots;
  for (size_t s = slots.size(); s-- > 0;) free_slots.push_back(s);
  size_t next_entry = 0;
  std::vector<std::vector<int32_t>> positions;
  while (next_entry < entries.size() || !flying.empty()) {
    std::vector<bool> fresh;
    while (next_entry < entries.size() && !free_slots.empty()) {
      flying.push_back(InFlight{
          .entry = next_entry++, .slot = free_slots.back(), .result = {}, .logits = {}, .next = 0, .pos = 0});
      free_slots.pop_back();
      slots[flying.back().slot].clear();
    }
    std::vector<SeqInput> inputs;
    positions.assign(flying.size(), {});
    for (size_t i = 0; i < flying.size(); ++i) {
      InFlight& f = flying[i];
      KvCache& kv = slots[f.slot];
      const bool starting = kv.used() == 0;
      fresh.push_back(starting);
      const std::vector<int32_t>& ids = entries[f.entry].ids;
      if (starting) {
        positions[i].resize(ids.size());
        std::iota(positions[i].begin(), positions[i].end(), 0);
        inputs.push_back(
            SeqInput{.kv = &kv, .tokens = ids, .positions = positions[i], .outputs = Outputs::kLast});
      } else {
        f.pos = static_cast<int32_t>(kv.used());
        inputs.push_back(SeqInput{.kv = &kv,
                                  .tokens = std::span(&f.next, 1),
                                  .positions = std::span(&f.pos, 1),
                                  .outputs = Outputs::kLast});
      }
    }
    Result<std::vector<std::vector<float>>> out = model.forward_batch(be, inputs, Head::kLogits);
    if (!out.ok()) {
      std::string names;
      for (const InFlight& f : flying) names += " \"" + entries[f.entry].prompt.substr(0, 40) + "\"";
      return out.status().with_context("prompts" + names);
    }
    std::vector<InFlight> still;
    for (size_t i = 0; i < flying.size(); ++i) {
      InFlight& f = flying[i];
      f.logits = std::move((*out)[i]);
      if (fresh[i]) {
        f.result.top = top_k(f.logits, static_cast<size_t>(o.top));
        if (model.hparams().n_vocab <= kMaxFullLogits) f.result.logits = f.logits;
      }
      if (o.greedy > 0 && record_step(f, entries[f.entry], o)) {
        still.push_back(std::move(f));
      } else {
        results[f.entry] = std::move(f.result);
        free_slots.push_back(f.slot);
      }
    }
    flying = std::move(still);
  }
  return results;
}

// Shortest text that reads back as the same float.
std::string num(float v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

std::string pairs_json(const std::vector<std::pair<int32_t, float>>& pairs) {
  std::string s = "[";
  for (size_t i = 0; i < pairs.size(); ++i) {
    s += (i ? ",[" : "[") + std::to_string(pairs[i].first) + "," + num(pairs[i].second) + "]";
  }
  return s + "]";
}

template <typename T, typename F>
std::string array_json(const std::vector<T>& v, F f) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + f(v[i]);
  return s + "]";
}

std::string to_json_line(const Entry& e, const EntryResult& r, bool teacher_forced) {
  const auto id = [](int32_t v) { return std::to_string(v); };
  std::string s = "{\"prompt\":" +
                  nlohmann::json(e.prompt).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  s += ",\"ids\":" + array_json(e.ids, id);
  s += ",\"top\":" + pairs_json(r.top);
  if (!r.logits.empty()) s += ",\"logits\":" + array_json(r.logits, num);
  s += ",\"greedy\":" + array_json(r.greedy, id);
  s += ",\"margins\":" + array_json(r.margins, num);
  s += ",\"steps\":" + array_json(r.steps, pairs_json);
  s += std::string(",\"teacher_forced\":") + (teacher_forced ? "true" : "false") + "}";
  return s;
}

// Prompts separated by a line "__sep__", tokenised with BOS (add_special) and without
// parsing special tokens, as the golden files were made.
Result<std::vector<Entry>> read_prompt_file(const std::string& path, const gguf::File& file) {
  PADDOCK_ASSIGN(std::string text, read_file(path));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::vector<std::string> prompts(1);
  bool first_line = true;  // of the current prompt
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    if (line == "__sep__") {
      prompts.emplace_back();
      first_line = true;
    } else {
      if (!first_line) prompts.back() += '\n';
      prompts.back() += line;
      first_line = false;
    }
    start = end + 1;
  }
  PADDOCK_ASSIGN(std::unique_ptr<Tokenizer> tok, Tokenizer::load(file));
  std::vector<Entry> entries;
  for (std::string& p : prompts) {
    Entry e;
    e.ids = tok->encode(p, /*add_special=*/true, /*parse_special=*/false);
    if (e.ids.empty()) return invalid_argument(path + ": prompt \"" + p + "\" has no tokens");
    e.prompt = std::move(p);
    entries.push_back(std::move(e));
  }
  return entries;
}

// Each prompt's embedding: tokenised here (the golden ids are checked, not fed), pooled as
// the model says and L2-normalised, one JSON line each.
Status run_embeddings(const EvalOptions& o, const gguf::File& file, const Model& model, Backend& be,
                      const std::vector<Entry>& entries) {
  PADDOCK_ASSIGN(std::unique_ptr<Tokenizer> tok, Tokenizer::load(file));
  const int64_t n_ctx = std::min(o.ctx.value_or(kGoldenCtx), model.hparams().n_ctx_train);
  PADDOCK_ASSIGN(KvCache kv, KvCache::create(kv_config(model.hparams(), n_ctx, DType::kF16, n_ctx), be));
  for (const Entry& e : entries) {
    const std::vector<int32_t> ids = tok->encode(e.prompt, /*add_special=*/true, /*parse_special=*/false);
    PADDOCK_ASSIGN(std::vector<float> raw, engine::embed(model, be, kv, ids, n_ctx));
    PADDOCK_ASSIGN(const std::vector<float> v, server::normalize_embedding(std::move(raw), 0));
    const auto id = [](int32_t i) { return std::to_string(i); };
    std::printf("{\"prompt\":%s,\"ids\":%s,\"embedding\":%s}\n",
                nlohmann::json(e.prompt).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str(),
                array_json(ids, id).c_str(), array_json(v, num).c_str());
  }
  std::fflush(stdout);
  return Status::ok();
}

Status run(const EvalOptions& o) {
  PADDOCK_ASSIGN(std::unique_ptr<gguf::File> file, gguf::File::open(o.model));  // outlives the backend
  PADDOCK_ASSIGN(std::unique_ptr<Backend> be, make_eval_backend(o, *file));
  std::vector<Entry> entries;
  if (!o.prompt_file.empty()) {
    PADDOCK_ASSIGN(entries, read_prompt_file(o.prompt_file, *file));
  } else {
    PADDOCK_ASSIGN(entries, read_teacher_file(o.teacher_force));
  }
  PADDOCK_ASSIGN(std::unique_ptr<Model> model, load_model(*file, *be));
  if (!model->has_lm_head()) return run_embeddings(o, *file, *model, *be, entries);
  // Each prompt is one pass: sliding-window layers then hold rings sized for the longest.
  int64_t longest = 1;
  for (const Entry& e : entries) longest = std::max<int64_t>(longest, static_cast<int64_t>(e.ids.size()));
  const KvCacheConfig kc = kv_config(model->hparams(), o.ctx.value_or(kGoldenCtx), DType::kF16, longest);
  PADDOCK_ASSIGN(std::vector<KvCache> slots,
                 KvCache::create_group(
                     kc, std::clamp<int64_t>(static_cast<int64_t>(entries.size()), 1, o.parallel), *be));
  PADDOCK_ASSIGN(const std::vector<EntryResult> results, evaluate_all(*model, *be, slots, entries, o));
  for (size_t i = 0; i < entries.size(); ++i) {
    std::printf("%s\n", to_json_line(entries[i], results[i], !o.teacher_force.empty()).c_str());
  }
  std::fflush(stdout);
  return Status::ok();
}

Status dump(const EvalOptions& o) {
  PADDOCK_ASSIGN(std::unique_ptr<gguf::File> file, gguf::File::open(o.model));  // outlives the backend
  PADDOCK_ASSIGN(std::unique_ptr<Backend> be, make_eval_backend(o, *file));
  PADDOCK_ASSIGN(std::unique_ptr<Tokenizer> tok, Tokenizer::load(*file));
  PADDOCK_ASSIGN(std::unique_ptr<Model> model, load_model(*file, *be));
  return dump_tensors(*model, *be, *tok, o.prompt.value_or(kDumpPrompt), o.dump_tensors);
}

// Generation mode: the engine's sampler, grammar and stop handling; text to stdout as it comes.
Status generate_text(const EvalOptions& o) {
  engine::EngineOptions eo;
  eo.num_ctx = o.ctx.value_or(0);
  eo.num_thread = static_cast<int>(o.threads);
  if (o.backend == "ref") {
    eo.backend = engine::BackendKind::kRef;
  } else if (!o.backend.empty() && o.backend != "cpu") {
    return invalid_argument("unknown backend \"" + o.backend + "\" (generation takes ref or cpu)");
  }
  if (o.num_gpu) {
    return invalid_argument("--num-gpu applies to the golden and dump modes (--backend cpu+vulkan or cpu+ref)");
  }
  PADDOCK_ASSIGN(std::unique_ptr<engine::LoadedModel> m, engine::LoadedModel::load(o.model, eo));
  engine::CompletionParams p;
  p.sampling = o.sampling;
  p.num_predict = o.n_predict;
  if (o.format_arg == "json") {
    p.format = "json";
  } else if (!o.format_arg.empty()) {
    PADDOCK_ASSIGN(p.format, read_file(o.format_arg));
  }
  if (!o.grammar_file.empty()) {
    PADDOCK_ASSIGN(p.grammar, read_file(o.grammar_file));
  }
  if (o.ignore_eos) {
    for (int32_t id = 0; id < static_cast<int32_t>(m->n_vocab()); ++id) {
      if (m->tokenizer().is_eog(id)) p.sampling.logit_bias[id] = -INFINITY;
    }
  }
  const Result<std::string> text = engine::generate(*m, *o.prompt, p, [](std::string_view piece) {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    return true;
  });
  return text.status();
}

}  // namespace

int run_eval(int argc, char** argv) {
  if (argc == 2 && (std::string_view(argv[1]) == "-h" || std::string_view(argv[1]) == "--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Result<EvalOptions> o = parse_args(argc, argv);
  if (!o.ok()) {
    std::fprintf(stderr, "Error: %s\n", o.status().message().c_str());
    return 1;
  }
  const Status s = !o->dump_tensors.empty() ? dump(*o) : o->prompt ? generate_text(*o) : run(*o);
  if (!s.is_ok()) {
    std::fprintf(stderr, "Error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace paddock::cli
