// `paddock eval`: the golden-data interface. Evaluates prompts as one batch, then decodes
// greedily one token at a time, and prints one JSON line per prompt in the format of
// ../shared/fixtures/golden/*.logits.jsonl (see the fixtures README), so that
// tools/compare_golden.py can check our numbers against llama.cpp's.
//   paddock eval --model m.gguf --teacher-force m.logits.jsonl --backend ref --json
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/ref/ref_backend.h"
#include "base/mapped_file.h"
#include "cli/commands.h"
#include "gguf/gguf.h"
#include "kv/kv_cache.h"
#include "model/registry.h"
#include "tokenizer/tokenizer.h"

namespace paddock::cli {

namespace {

constexpr const char* kUsage =
    "Usage: paddock eval --model FILE (--prompt-file FILE | --teacher-force GOLDEN.jsonl) [--greedy N]\n"
    "                    [--top K] [--ctx N] [--backend ref|cpu] [--threads N] --json\n";
// Full logits are printed only for vocabularies up to this size, as in the golden files.
constexpr int64_t kMaxFullLogits = 4096;
constexpr size_t kStepTop = 5;
constexpr size_t kRefDequantCacheBytes = size_t{512} << 20;

struct EvalOptions {
  std::string model;
  std::string prompt_file;
  std::string teacher_force;
  int64_t greedy = 32;
  int64_t top = 20;
  int64_t ctx = 1024;
  std::string backend = "ref";
  bool json = false;
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

Result<EvalOptions> parse_args(int argc, char** argv) {
  EvalOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      o.json = true;
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
    } else if (a == "--greedy") {
      PADDOCK_ASSIGN(o.greedy, parse_count(a, v, 0));
    } else if (a == "--top") {
      PADDOCK_ASSIGN(o.top, parse_count(a, v, 1));
    } else if (a == "--ctx") {
      PADDOCK_ASSIGN(o.ctx, parse_count(a, v, 1));
    } else if (a == "--threads") {
      PADDOCK_ASSIGN(const int64_t threads, parse_count(a, v, 1));
      (void)threads;  // the ref backend is single-threaded by design
    } else if (a == "--backend") {
      o.backend = v;
    } else {
      return invalid_argument("unknown flag " + a + "\n" + kUsage);
    }
  }
  if (o.model.empty()) return invalid_argument(std::string("--model is required\n") + kUsage);
  if (o.prompt_file.empty() == o.teacher_force.empty()) {
    return invalid_argument(std::string("expected exactly one of --prompt-file and --teacher-force\n") +
                            kUsage);
  }
  if (!o.json) return invalid_argument(std::string("only --json output exists; pass --json\n") + kUsage);
  return o;
}

Result<std::unique_ptr<Backend>> make_backend(const std::string& name) {
  // One backend per model here, so the ref backend may keep dequantized weights: decoding
  // then costs one dequantization per matrix instead of one per step.
  if (name == "ref") return make_ref_backend({.dequant_cache_bytes = kRefDequantCacheBytes});
  if (name == "cpu") return unsupported("backend \"cpu\" is not available yet (use --backend ref)");
  return invalid_argument("unknown backend \"" + name + "\" (expected ref or cpu)");
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
    PADDOCK_ASSIGN(e.forced, int_array(j, "greedy", line_no));
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

Result<EntryResult> evaluate(const Model& model, Backend& be, KvCache& kv, const Entry& e,
                             const EvalOptions& o) {
  kv.clear();
  std::vector<int32_t> pos(e.ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  PADDOCK_ASSIGN(std::vector<float> logits, model.forward(be, kv, e.ids, pos, false));
  EntryResult r;
  r.top = top_k(logits, static_cast<size_t>(o.top));
  if (model.hparams().n_vocab <= kMaxFullLogits) r.logits = logits;
  for (int64_t step = 0; step < o.greedy; ++step) {
    auto best = top_k(logits, kStepTop);
    r.greedy.push_back(best[0].first);
    r.margins.push_back(best.size() > 1 ? best[0].second - best[1].second : 0.0f);
    r.steps.push_back(std::move(best));
    if (step + 1 == o.greedy) break;
    const size_t k = static_cast<size_t>(step);
    const int32_t next = k < e.forced.size() ? e.forced[k] : r.greedy.back();
    const int32_t p = static_cast<int32_t>(kv.used());
    PADDOCK_ASSIGN(logits, model.forward(be, kv, std::span(&next, 1), std::span(&p, 1), false));
  }
  return r;
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

Status run(const EvalOptions& o) {
  PADDOCK_ASSIGN(std::unique_ptr<Backend> be, make_backend(o.backend));
  PADDOCK_ASSIGN(std::unique_ptr<gguf::File> file, gguf::File::open(o.model));
  std::vector<Entry> entries;
  if (!o.prompt_file.empty()) {
    PADDOCK_ASSIGN(entries, read_prompt_file(o.prompt_file, *file));
  } else {
    PADDOCK_ASSIGN(entries, read_teacher_file(o.teacher_force));
  }
  PADDOCK_ASSIGN(std::unique_ptr<Model> model, load_model(*file, *be));
  PADDOCK_ASSIGN(KvCache kv, KvCache::create(model->kv_config(o.ctx, DType::kF16)));
  for (const Entry& e : entries) {
    Result<EntryResult> r = evaluate(*model, *be, kv, e, o);
    if (!r.ok()) return r.status().with_context("prompt \"" + e.prompt.substr(0, 40) + "\"");
    std::printf("%s\n", to_json_line(e, *r, !o.teacher_force.empty()).c_str());
    std::fflush(stdout);
  }
  return Status::ok();
}

}  // namespace

int run_eval(int argc, char** argv) {
  Result<EvalOptions> o = parse_args(argc, argv);
  if (!o.ok()) {
    std::fprintf(stderr, "Error: %s\n", o.status().message().c_str());
    return 1;
  }
  if (const Status s = run(*o); !s.is_ok()) {
    std::fprintf(stderr, "Error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace paddock::cli
