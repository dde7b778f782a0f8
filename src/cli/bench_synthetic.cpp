#include "cli/bench_synthetic.h"

#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "base/threadpool.h"
#include "gguf/writer.h"
#include "quant/quant.h"
#include "tensor/dtype.h"

namespace paddock::cli {

namespace {

constexpr std::array kShapes = {
    SyntheticShape{"llama3.2-1b", "llama", 2048, 16, 32, 8, 64, 8192, 128256, true, false, 1e-5f, 500000.0f},
    SyntheticShape{"llama3.2-3b", "llama", 3072, 28, 24, 8, 128, 8192, 128256, true, false, 1e-5f, 500000.0f},
    SyntheticShape{"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 128, 3072, 128256, true, true, 1e-6f, 1000000.0f},
    SyntheticShape{"llama3.1-8b", "llama", 4096, 32, 32, 8, 128, 14336, 128256, false, false, 1e-5f,
                   500000.0f},
    SyntheticShape{"gemma2-2b", "gemma2", 2304, 26, 8, 4, 256, 9216, 256000, true, false, 1e-6f, 10000.0f,
                   ShapeLayout::kGemma3, 4096, 8192},
    SyntheticShape{"gemma3-1b", "gemma3", 1152, 26, 4, 1, 256, 6912, 262144, true, true, 1e-6f, 1000000.0f,
                   ShapeLayout::kGemma3, 512, 32768},
    SyntheticShape{"gemma3-4b", "gemma3", 2560, 34, 8, 4, 256, 10240, 262144, true, true, 1e-6f, 1000000.0f,
                   ShapeLayout::kGemma3, 1024, 131072},
    SyntheticShape{"phi3-mini", "phi3", 3072, 32, 32, 32, 96, 8192, 32064, false, false, 1e-5f, 10000.0f,
                   ShapeLayout::kPhi3, 0, 4096},
    SyntheticShape{"qwen3moe-7b-a1b", "qwen3moe", 2048, 16, 16, 4, 128, 1024, 151936, false, true, 1e-6f,
                   1000000.0f, ShapeLayout::kLlama, 0, 40960, 64, 8},
    SyntheticShape{"gpt-oss-20b", "gpt-oss", 2880, 24, 64, 8, 64, 2880, 201088, false, false, 1e-5f,
                   150000.0f, ShapeLayout::kGptOss, 128, 131072, 32, 4},
    SyntheticShape{"bert-base", "bert", 768, 12, 12, 12, 64, 3072, 30522, true, false, 1e-12f, 10000.0f,
                   ShapeLayout::kBert, 0, 512},
    // Hidden: small enough for tests to build, save and bench in a second.
    SyntheticShape{"tiny", "llama", 256, 2, 8, 4, 32, 768, 1024, true, false, 1e-5f, 500000.0f},
};
constexpr std::string_view kHiddenShape = "tiny";
// Distinct random rows per tensor shape; the rest of the rows repeat them.
constexpr int64_t kSampleRows = 8;
// Placeholder vocabulary: <unk>, <s>, </s>, then the 256 byte tokens llama.cpp's SPM loader
// looks up (<0x0A> for the line feed), then "tok<N>".
constexpr int kSpecialTokens = 3;
constexpr int kByteTokens = 256;
// llama_token_type values.
constexpr int32_t kTokenNormal = 1;
constexpr int32_t kTokenUnknown = 2;
constexpr int32_t kTokenControl = 3;
constexpr int32_t kTokenByte = 6;

// kRouter: every row random (a router whose rows repeated would tie experts and send every
// token to the same few).
enum class Init { kNorm, kProjection, kEmbedding, kBias, kRouter };

struct TensorSpec {
  std::string name;
  std::vector<int64_t> ne;
  Init init;
};

// splitmix64: fast, seedable, good enough for weights whose values do not matter.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                                           // Box-Muller
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t s_;
};

// BERT's tensors (llama.cpp's names): norms are weight and bias, every projection has a bias.
std::vector<TensorSpec> bert_tensor_specs(const SyntheticShape& s, int64_t n_vocab) {
  std::vector<TensorSpec> out;
  const auto norm = [&](const std::string& name) {
    out.push_back({name + ".weight", {s.n_embd}, Init::kNorm});
    out.push_back({name + ".bias", {s.n_embd}, Init::kBias});
  };
  const auto linear = [&](const std::string& name, int64_t n_in, int64_t n_out) {
    out.push_back({name + ".weight", {n_in, n_out}, Init::kProjection});
    out.push_back({name + ".bias", {n_out}, Init::kBias});
  };
  out.push_back({"token_embd.weight", {s.n_embd, n_vocab}, Init::kEmbedding});
  out.push_back({"position_embd.weight", {s.n_embd, s.context_length}, Init::kEmbedding});
  out.push_back({"token_types.weight", {s.n_embd, 2}, Init::kEmbedding});
  norm("token_embd_norm");
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output"}) linear(p + t, s.n_embd, s.n_embd);
    norm(p + "attn_output_norm");
    linear(p + "ffn_up", s.n_embd, s.n_ff);
    linear(p + "ffn_down", s.n_ff, s.n_embd);
    norm(p + "layer_output_norm");
  }
  return out;
}

std::vector<TensorSpec> tensor_specs(const SyntheticShape& s, int64_t n_vocab) {
  if (s.layout == ShapeLayout::kBert) return bert_tensor_specs(s, n_vocab);
  const int64_t q_dim = s.n_head * s.head_dim;
  const int64_t kv_dim = s.n_head_kv * s.head_dim;
  std::vector<TensorSpec> out;
  out.push_back({"token_embd.weight", {s.n_embd, n_vocab}, Init::kEmbedding});
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    out.push_back({p + "attn_norm.weight", {s.n_embd}, Init::kNorm});
    if (s.layout == ShapeLayout::kPhi3) {
      out.push_back({p + "attn_qkv.weight", {s.n_embd, q_dim + 2 * kv_dim}, Init::kProjection});
    } else {
      out.push_back({p + "attn_q.weight", {s.n_embd, q_dim}, Init::kProjection});
      out.push_back({p + "attn_k.weight", {s.n_embd, kv_dim}, Init::kProjection});
      out.push_back({p + "attn_v.weight", {s.n_embd, kv_dim}, Init::kProjection});
    }
    out.push_back({p + "attn_output.weight", {q_dim, s.n_embd}, Init::kProjection});
    if (s.layout == ShapeLayout::kGptOss) {
      out.push_back({p + "attn_q.bias", {q_dim}, Init::kBias});
      out.push_back({p + "attn_k.bias", {kv_dim}, Init::kBias});
      out.push_back({p + "attn_v.bias", {kv_dim}, Init::kBias});
      out.push_back({p + "attn_output.bias", {s.n_embd}, Init::kBias});
      out.push_back({p + "attn_sinks.weight", {s.n_head}, Init::kBias});
    }
    if (s.qk_norm) {
      out.push_back({p + "attn_q_norm.weight", {s.head_dim}, Init::kNorm});
      out.push_back({p + "attn_k_norm.weight", {s.head_dim}, Init::kNorm});
    }
    if (s.layout == ShapeLayout::kGemma3 || s.layout == ShapeLayout::kGptOss) {
      out.push_back({p + "post_attention_norm.weight", {s.n_embd}, Init::kNorm});
    }
    if (s.layout != ShapeLayout::kGptOss) out.push_back({p + "ffn_norm.weight", {s.n_embd}, Init::kNorm});
    if (s.n_expert > 0) {
      out.push_back({p + "ffn_gate_inp.weight", {s.n_embd, s.n_expert}, Init::kRouter});
      out.push_back({p + "ffn_gate_exps.weight", {s.n_embd, s.n_ff, s.n_expert}, Init::kProjection});
      out.push_back({p + "ffn_up_exps.weight", {s.n_embd, s.n_ff, s.n_expert}, Init::kProjection});
      out.push_back({p + "ffn_down_exps.weight", {s.n_ff, s.n_embd, s.n_expert}, Init::kProjection});
      if (s.layout == ShapeLayout::kGptOss) {
        out.push_back({p + "ffn_gate_inp.bias", {s.n_expert}, Init::kBias});
        out.push_back({p + "ffn_gate_exps.bias", {s.n_ff, s.n_expert}, Init::kBias});
        out.push_back({p + "ffn_up_exps.bias", {s.n_ff, s.n_expert}, Init::kBias});
        out.push_back({p + "ffn_down_exps.bias", {s.n_embd, s.n_expert}, Init::kBias});
      }
      continue;
    }
    if (s.layout == ShapeLayout::kPhi3) {
      out.push_back({p + "ffn_up.weight", {s.n_embd, 2 * s.n_ff}, Init::kProjection});
    } else {
      out.push_back({p + "ffn_gate.weight", {s.n_embd, s.n_ff}, Init::kProjection});
      out.push_back({p + "ffn_up.weight", {s.n_embd, s.n_ff}, Init::kProjection});
    }
    out.push_back({p + "ffn_down.weight", {s.n_ff, s.n_embd}, Init::kProjection});
    if (s.layout == ShapeLayout::kGemma3)
      out.push_back({p + "post_ffw_norm.weight", {s.n_embd}, Init::kNorm});
  }
  out.push_back({"output_norm.weight", {s.n_embd}, Init::kNorm});
  if (!s.tied) out.push_back({"output.weight", {s.n_embd, n_vocab}, Init::kProjection});
  return out;
}

// kSampleRows random rows of one tensor, quantized to `type`, repeated over all its rows.
std::vector<uint8_t> make_tensor_bytes(DType type, const std::vector<int64_t>& ne, Init init, uint64_t seed,
                                       ThreadPool& pool) {
  const int64_t row_len = ne[0];
  int64_t n_rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) n_rows *= ne[d];
  const int64_t sample_rows = init == Init::kRouter ? n_rows : std::min(n_rows, kSampleRows);
  Rng rng(seed);
  std::vector<float> values(static_cast<size_t>(sample_rows * row_len));
  const double std_dev = init == Init::kEmbedding ? 0.2
                         : init == Init::kBias    ? 0.02
                                                  : 1.0 / std::sqrt(static_cast<double>(row_len));
  for (float& v : values) {
    v = init == Init::kNorm ? static_cast<float>(0.9 + 0.2 * rng.uniform())
                            : static_cast<float>(std_dev * rng.normal());
  }
  const std::vector<uint8_t> sample = quantize(type, values);
  const size_t row_bytes = sample.size() / static_cast<size_t>(sample_rows);
  std::vector<uint8_t> out(row_bytes * static_cast<size_t>(n_rows));
  pool.parallel_for(n_rows, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      std::memcpy(out.data() + static_cast<size_t>(r) * row_bytes,
                  sample.data() + static_cast<size_t>(r % sample_rows) * row_bytes, row_bytes);
    }
  });
  return out;
}

void set_placeholder_vocab(gguf::Writer& w, int64_t n_vocab) {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  tokens.reserve(static_cast<size_t>(n_vocab));
  for (int64_t i = 0; i < n_vocab; ++i) {
    if (i == 0) {
      tokens.emplace_back("<unk>");
    } else if (i == 1) {
      tokens.emplace_back("<s>");
    } else if (i == 2) {
      tokens.emplace_back("</s>");
    } else if (i < kSpecialTokens + kByteTokens) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", static_cast<unsigned>(i - kSpecialTokens));
      tokens.emplace_back(buf);
    } else {
      tokens.push_back("tok" + std::to_string(i));
    }
    const bool normal = i >= kSpecialTokens + kByteTokens;
    scores.push_back(normal ? -static_cast<float>(i) : 0.0f);
    types.push_back(i == 0               ? kTokenUnknown
                    : i < kSpecialTokens ? kTokenControl
                    : normal             ? kTokenNormal
                                         : kTokenByte);
  }
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_array_str("tokenizer.ggml.tokens", tokens);
  w.set_array_f32("tokenizer.ggml.scores", scores);
  w.set_array_i32("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
}

// A WordPiece placeholder for encoders: [PAD], [UNK], [CLS], [SEP], [MASK] at BERT's ids,
// "tok<N>" elsewhere.
void set_placeholder_wordpiece(gguf::Writer& w, int64_t n_vocab) {
  constexpr int32_t kPad = 0, kUnk = 100, kCls = 101, kSep = 102, kMask = 103;
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int64_t i = 0; i < n_vocab; ++i) {
    const auto id = static_cast<int32_t>(i);
    tokens.push_back(id == kPad    ? "[PAD]"
                     : id == kUnk  ? "[UNK]"
                     : id == kCls  ? "[CLS]"
                     : id == kSep  ? "[SEP]"
                     : id == kMask ? "[MASK]"
                                   : "tok" + std::to_string(i));
    types.push_back(id == kPad || (id >= kUnk && id <= kMask) ? kTokenControl : kTokenNormal);
  }
  w.set_string("tokenizer.ggml.model", "bert");
  w.set_string("tokenizer.ggml.pre", "bert-bge");
  w.set_array_str("tokenizer.ggml.tokens", tokens);
  w.set_array_i32("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.unknown_token_id", kUnk);
  w.set_u32("tokenizer.ggml.seperator_token_id", kSep);
  w.set_u32("tokenizer.ggml.padding_token_id", kPad);
  w.set_u32("tokenizer.ggml.cls_token_id", kCls);
  w.set_u32("tokenizer.ggml.mask_token_id", kMask);
  w.set_u32("tokenizer.ggml.token_type_count", 2);  // token_types' rows; llama.cpp requires it
}

Result<int64_t> copy_vocab(gguf::Writer& w, const gguf::File& vocab) {
  const gguf::Value* tokens = vocab.get_array("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->items.empty()) {
    return invalid_argument("--vocab: expected a GGUF file with a tokenizer.ggml.tokens array, found none");
  }
  for (const gguf::KeyValue& kv : vocab.metadata()) {
    if (kv.key.starts_with("tokenizer.")) w.set_value(kv.key, kv.value);
  }
  return static_cast<int64_t>(tokens->items.size());
}

void set_hparams(gguf::Writer& w, const SyntheticShape& s, FileType ftype, int64_t n_vocab) {
  const std::string a(s.arch);
  w.set_string("general.architecture", s.arch);
  w.set_string("general.name", "synthetic " + std::string(s.name));
  w.set_u32("general.file_type", static_cast<uint32_t>(ftype));
  w.set_u32("general.quantization_version", 2);
  w.set_u32(a + ".context_length", static_cast<uint32_t>(s.context_length));
  w.set_u32(a + ".embedding_length", static_cast<uint32_t>(s.n_embd));
  w.set_u32(a + ".block_count", static_cast<uint32_t>(s.n_layer));
  w.set_u32(a + ".feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.set_u32(a + ".attention.head_count", static_cast<uint32_t>(s.n_head));
  w.set_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  if (s.layout == ShapeLayout::kBert) {
    w.set_f32(a + ".attention.layer_norm_epsilon", s.rms_eps);
    w.set_bool(a + ".attention.causal", false);
    w.set_u32(a + ".pooling_type", 1);  // mean
  } else {
    w.set_f32(a + ".attention.layer_norm_rms_epsilon", s.rms_eps);
  }
  w.set_f32(a + ".rope.freq_base", s.rope_freq_base);
  w.set_u32(a + ".rope.dimension_count", static_cast<uint32_t>(s.head_dim));
  if (s.head_dim * s.n_head != s.n_embd) {
    w.set_u32(a + ".attention.key_length", static_cast<uint32_t>(s.head_dim));
    w.set_u32(a + ".attention.value_length", static_cast<uint32_t>(s.head_dim));
  }
  w.set_u32(a + ".vocab_size", static_cast<uint32_t>(n_vocab));
  if (s.window > 0) w.set_u32(a + ".attention.sliding_window", static_cast<uint32_t>(s.window));
  if (s.n_expert > 0) {
    w.set_u32(a + ".expert_count", static_cast<uint32_t>(s.n_expert));
    w.set_u32(a + ".expert_used_count", static_cast<uint32_t>(s.n_expert_used));
    w.set_u32(a + ".expert_feed_forward_length", static_cast<uint32_t>(s.n_ff));
  }
  if (s.layout == ShapeLayout::kGptOss) {  // gpt-oss's YaRN
    w.set_string(a + ".rope.scaling.type", "yarn");
    w.set_f32(a + ".rope.scaling.factor", 32.0f);
    w.set_u32(a + ".rope.scaling.original_context_length", 4096);
  }
}

}  // namespace

Result<const SyntheticShape*> find_synthetic_shape(std::string_view name) {
  for (const SyntheticShape& s : kShapes) {
    if (s.name == name) return &s;
  }
  return invalid_argument("unknown --shape \"" + std::string(name) + "\": expected one of " +
                          synthetic_shape_names());
}

std::string synthetic_shape_names() {
  std::string out;
  for (const SyntheticShape& s : kShapes) {
    if (s.name == kHiddenShape) continue;
    if (!out.empty()) out += '|';
    out += s.name;
  }
  return out;
}

Status write_synthetic_model(const SyntheticShape& shape, FileType ftype, const gguf::File* vocab,
                             int n_threads, const std::string& path) {
  gguf::Writer w;
  int64_t n_vocab = shape.n_vocab;
  // Vocabulary keys go after the hyperparameters; the size must be known first.
  gguf::Writer vocab_keys;
  if (vocab != nullptr) {
    PADDOCK_ASSIGN(n_vocab, copy_vocab(vocab_keys, *vocab));
  } else if (shape.layout == ShapeLayout::kBert) {
    set_placeholder_wordpiece(vocab_keys, n_vocab);
  } else {
    set_placeholder_vocab(vocab_keys, n_vocab);
  }
  set_hparams(w, shape, ftype, n_vocab);
  for (const gguf::KeyValue& kv : vocab_keys.metadata()) w.set_value(kv.key, kv.value);

  const std::vector<TensorSpec> specs = tensor_specs(shape, n_vocab);
  std::vector<MixTensor> mix;
  mix.reserve(specs.size());
  for (const TensorSpec& t : specs) {
    const int64_t ne2 = t.ne.size() > 2 ? t.ne[2] : 1;
    mix.push_back({t.name, DType::kF32, static_cast<int>(t.ne.size()), t.ne[0], ne2});
  }
  MixModel model;
  model.arch = shape.arch;
  model.n_layer = static_cast<int>(shape.n_layer);
  model.n_head = static_cast<int>(shape.n_head);
  model.n_head_kv = static_cast<int>(shape.n_head_kv);
  model.n_expert = static_cast<int>(shape.n_expert);
  const std::vector<DType> types = plan_mix(ftype, mix, model);

  // One buffer per distinct (type, shape, init): the layers share their bytes.
  ThreadPool pool(n_threads);
  std::map<std::tuple<DType, std::vector<int64_t>, Init>, std::vector<uint8_t>> buffers;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& t = specs[i];
    auto key = std::make_tuple(types[i], t.ne, t.init);
    auto it = buffers.find(key);
    if (it == buffers.end()) {
      const uint64_t seed = 0x5eed0000ULL + buffers.size();
      it = buffers.emplace(key, make_tensor_bytes(types[i], t.ne, t.init, seed, pool)).first;
    }
    PADDOCK_TRY(w.add_tensor_view(t.name, types[i], t.ne, it->second));
  }
  return w.write_file(path);
}

}  // namespace paddock::cli
