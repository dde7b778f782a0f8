#include "gguf/layouts.h"

#include <array>
#include <cstdio>

namespace paddock::gguf {

std::string_view LayoutEditor::own(std::string_view s) { return f_.owned_.emplace_back(s); }

void LayoutEditor::reindex() {
  f_.key_index_.clear();
  for (size_t i = 0; i < f_.kv_.size(); ++i) f_.key_index_.emplace(f_.kv_[i].key, i);
  f_.tensor_index_.clear();
  for (size_t i = 0; i < f_.tensors_.size(); ++i) f_.tensor_index_.emplace(f_.tensors_[i].name, i);
}

void LayoutEditor::rename_key_prefix(std::string_view from, std::string_view to) {
  for (KeyValue& kv : f_.kv_) {
    if (kv.key.starts_with(from) && !f_.find(std::string(to) + std::string(kv.key.substr(from.size())))) {
      kv.key = own(std::string(to) + std::string(kv.key.substr(from.size())));
    }
  }
  reindex();
}

void LayoutEditor::rename_key(std::string_view from, std::string_view to) {
  const auto it = f_.key_index_.find(from);
  if (it == f_.key_index_.end()) return;
  const size_t i = it->second;
  f_.kv_[i].key = own(to);
  const auto old = f_.key_index_.find(to);
  if (old != f_.key_index_.end()) f_.kv_.erase(f_.kv_.begin() + static_cast<ptrdiff_t>(old->second));
  reindex();
}

void LayoutEditor::set(std::string_view key, Value v) {
  const auto it = f_.key_index_.find(key);
  if (it != f_.key_index_.end()) {
    f_.kv_[it->second].value = std::move(v);
    return;
  }
  f_.kv_.push_back(KeyValue{own(key), std::move(v)});
  f_.key_index_.emplace(f_.kv_.back().key, f_.kv_.size() - 1);
}

void LayoutEditor::set_string(std::string_view key, std::string_view value) {
  Value v;
  v.type = ValueType::kString;
  v.s = own(value);
  set(key, std::move(v));
}

void LayoutEditor::set_u32(std::string_view key, uint32_t value) {
  Value v;
  v.type = ValueType::kU32;
  v.u = value;
  set(key, std::move(v));
}

void LayoutEditor::set_f32(std::string_view key, float value) {
  Value v;
  v.type = ValueType::kF32;
  v.f = value;
  set(key, std::move(v));
}

Status LayoutEditor::rename_tensor(std::string_view from, std::string_view to) {
  const auto it = f_.tensor_index_.find(from);
  if (it == f_.tensor_index_.end()) return Status::ok();
  if (f_.tensor_index_.contains(to)) {
    return corrupt("tensor " + std::string(from) + " would be renamed " + std::string(to) + ", which exists");
  }
  const size_t i = it->second;
  f_.tensor_index_.erase(it);
  f_.tensors_[i].name = own(to);
  f_.tensor_index_.emplace(f_.tensors_[i].name, i);
  return Status::ok();
}

namespace {

std::string_view arch(const File& f) { return f.get_string("general.architecture").value_or(""); }

// "blk.N." of a tensor name, or empty.
std::string_view block_prefix(std::string_view name) {
  if (!name.starts_with("blk.")) return {};
  const size_t dot = name.find('.', 4);
  return dot == std::string_view::npos ? std::string_view() : name.substr(0, dot + 1);
}

// Whether the pre-tokenizer is unnamed (absent or "default").
bool default_pre(const File& f) {
  return f.get_string("tokenizer.ggml.pre").value_or("default") == "default";
}

// Ollama's gpt-oss converter: arch gptoss with gptoss.* keys, attn_out for attn_output,
// attn_sinks without .weight, ffn_norm for post_attention_norm, no expert FFN length (the
// experts' shape has it), no rope scaling type (YaRN), and "default" where the gpt-4o
// pre-tokenizer is meant.
bool is_ollama_gptoss(const File& f) { return arch(f) == "gptoss"; }

Status translate_ollama_gptoss(LayoutEditor& e) {
  e.rename_key_prefix("gptoss.", "gpt-oss.");
  e.set_string("general.architecture", "gpt-oss");
  std::vector<std::string> names;
  for (const TensorInfo& t : e.file().tensors()) names.emplace_back(t.name);
  for (const std::string& name : names) {
    const std::string blk(block_prefix(name));
    if (blk.empty()) continue;
    const std::string_view rest = std::string_view(name).substr(blk.size());
    if (rest.starts_with("attn_out.")) {
      PADDOCK_TRY(e.rename_tensor(name, blk + "attn_output." + std::string(rest.substr(9))));
    } else if (rest == "attn_sinks") {
      PADDOCK_TRY(e.rename_tensor(name, blk + "attn_sinks.weight"));
    } else if (rest == "ffn_norm.weight") {
      PADDOCK_TRY(e.rename_tensor(name, blk + "post_attention_norm.weight"));
    }
  }
  const File& f = e.file();
  if (!f.find("gpt-oss.expert_feed_forward_length")) {
    const TensorInfo* gate = f.find_tensor("blk.0.ffn_gate_exps.weight");
    if (gate == nullptr || gate->ne.size() != 3) {
      return corrupt(
          "Ollama gpt-oss file: no gptoss.expert_feed_forward_length and no 3-D blk.0.ffn_gate_exps.weight");
    }
    e.set_u32("gpt-oss.expert_feed_forward_length", static_cast<uint32_t>(gate->ne[1]));
  }
  if (!f.find("gpt-oss.rope.scaling.type")) e.set_string("gpt-oss.rope.scaling.type", "yarn");
  if (f.get_string("tokenizer.ggml.model").value_or("") == "gpt2" && default_pre(f)) {
    e.set_string("tokenizer.ggml.pre", "gpt-4o");
  }
  return Status::ok();
}

// Ollama's gemma3 converter: rope.global.freq_base / rope.local.freq_base for llama.cpp's
// rope.freq_base / rope.freq_base_swa (its multimodal files have neither: Ollama's defaults
// 1e6 / 10000 apply), no rms epsilon (Ollama's default 1e-6), and the vision tower embedded
// (v.*, mm.* tensors, gemma3.vision.* / gemma3.mm.* keys), which stays readable but which no
// text model binds. llama.cpp's converter always writes rope.freq_base and never the
// global/local keys, so either sign marks Ollama's layout.
bool is_ollama_gemma3(const File& f) {
  return arch(f) == "gemma3" && (!f.find("gemma3.rope.freq_base") || f.find("gemma3.rope.global.freq_base") ||
                                 f.find("gemma3.rope.local.freq_base"));
}

Status translate_ollama_gemma3(LayoutEditor& e) {
  e.rename_key("gemma3.rope.global.freq_base", "gemma3.rope.freq_base");
  e.rename_key("gemma3.rope.local.freq_base", "gemma3.rope.freq_base_swa");
  const File& f = e.file();
  if (!f.find("gemma3.rope.freq_base")) e.set_f32("gemma3.rope.freq_base", 1e6f);
  if (!f.find("gemma3.attention.layer_norm_rms_epsilon"))
    e.set_f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
  return Status::ok();
}

// Some Llama 3-family files Ollama published lack tokenizer.ggml.pre (or leave it
// "default"; their EOS is <|end_of_text|>): Llama 3's vocabulary, with <|eot_id|> at 128009
// and its header markers, means Llama 3's pre-tokenizer, as Ollama's compatibility layer
// decides. (<|eot_id|> ends turns by the tokenizer's well-known texts.)
bool is_ollama_llama3(const File& f) {
  if (arch(f) != "llama" || !default_pre(f) || f.get_string("tokenizer.ggml.model").value_or("") != "gpt2") {
    return false;
  }
  const Value* tokens = f.get_array("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->elem_type != ValueType::kString || tokens->items.size() <= 128009)
    return false;
  bool start = false, end = false;
  for (const Value& t : tokens->items) {
    start = start || t.s == "<|start_header_id|>";
    end = end || t.s == "<|end_header_id|>";
  }
  return tokens->items[128009].s == "<|eot_id|>" && start && end;
}

Status translate_ollama_llama3(LayoutEditor& e) {
  e.set_string("tokenizer.ggml.pre", "llama-bpe");
  return Status::ok();
}

struct Translation {
  std::string_view name;
  bool (*matches)(const File&);
  Status (*apply)(LayoutEditor&);
};

constexpr std::array kTranslations = {
    Translation{"ollama-gptoss", is_ollama_gptoss, translate_ollama_gptoss},
    Translation{"ollama-gemma3", is_ollama_gemma3, translate_ollama_gemma3},
    Translation{"ollama-llama3", is_ollama_llama3, translate_ollama_llama3},
};

}  // namespace

Status translate_layout(File& f) {
  for (const Translation& t : kTranslations) {
    if (!t.matches(f)) continue;
    LayoutEditor e(f);
    PADDOCK_TRY(t.apply(e).with_context("translating Ollama's layout (" + std::string(t.name) + ")"));
    e.mark_translated(t.name);
    return Status::ok();
  }
  return Status::ok();
}

}  // namespace paddock::gguf
