#include "tokenizer/vocab.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>

#include "base/log.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace paddock::tok {

namespace {

// Texts llama.cpp treats as end of generation wherever they appear in a vocabulary.
constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<\xef\xbd\x9c"
    "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
};
// Candidates for the end-of-turn token when the file does not name one.
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<EOT>",
    "_<EOT>",
    "<\xef\xbd\x9c"
    "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
};

// Harmony (gpt-oss), as llama.cpp treats it: <|return|> and <|call|> end generation, <|end|>
// only ends one message of it; <|end|> and the message framing must reach the output text,
// where the Harmony parser reads the channels, so they become user-defined (always shown).
void mark_harmony_tokens(Vocab* v) {
  const int32_t end = v->find("<|end|>");
  if (end < 0 || v->find("<|return|>") < 0 || v->find("<|call|>") < 0) return;
  v->eog.erase(std::remove(v->eog.begin(), v->eog.end(), end), v->eog.end());
  for (const std::string_view t : {"<|end|>", "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"}) {
    if (const int32_t id = v->find(t); id >= 0) v->attr[static_cast<size_t>(id)] = kAttrUserDefined;
  }
}

uint32_t attr_from_type(int64_t type) {
  switch (type) {
    case 1: return kAttrNormal;
    case 2: return kAttrUnknown;
    case 3: return kAttrControl;
    case 4: return kAttrUserDefined;
    case 5: return kAttrUnused;
    case 6: return kAttrByte;
    default: return kAttrUndefined;
  }
}

Status read_id(const gguf::File& f, std::string_view key, int32_t n_tokens, int32_t& id) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return Status::ok();
  const auto i = v->as_i64();
  if (!i)
    return corrupt(std::string(key) + ": expected an integer token id, found " +
                   std::string(gguf::value_type_name(v->type)));
  if (*i == -1 || *i == 0xFFFFFFFFll) {  // converters write -1 (or u32 -1) for "none"
    id = kNoToken;
    return Status::ok();
  }
  if (*i < 0 || *i >= n_tokens) {
    // llama.cpp warns about a bad special token and keeps the default id; so do we.
    log_warn(std::string(key) + ": token id " + std::to_string(*i) + " is not below the vocabulary size " +
             std::to_string(n_tokens) + "; ignored");
    return Status::ok();
  }
  id = static_cast<int32_t>(*i);
  return Status::ok();
}

void read_bool(const gguf::File& f, std::string_view key, bool& out) {
  if (const auto b = f.get_bool(key)) out = *b;
}

// "a b" -> ids of "a" and "b"; llama.cpp splits at the first space after the first byte.
void add_merges(const gguf::Value& merges, Vocab& v) {
  v.merge_rank.reserve(merges.items.size());
  int32_t rank = 0;
  for (const gguf::Value& m : merges.items) {
    const std::string_view s = m.s;
    const size_t sp = s.size() > 1 ? s.find(' ', 1) : std::string_view::npos;
    if (sp != std::string_view::npos) {
      const int32_t l = v.find(s.substr(0, sp));
      const int32_t r = v.find(s.substr(sp + 1));
      if (l >= 0 && r >= 0) {
        v.merge_rank.insert((static_cast<uint64_t>(l) << 32) | static_cast<uint32_t>(r), rank);
      }
    }
    ++rank;
  }
}

}  // namespace

Result<std::unique_ptr<Vocab>> load_vocab(const gguf::File& f) {
  auto v = std::make_unique<Vocab>();
  const auto model = f.get_string("tokenizer.ggml.model");
  if (!model) return corrupt("tokenizer.ggml.model: expected a string (llama, gpt2 or bert), found none");
  if (*model == "llama") {
    v->type = VocabType::kSpm;
  } else if (*model == "gpt2") {
    v->type = VocabType::kBpe;
  } else if (*model == "bert") {
    v->type = VocabType::kWpm;
  } else {
    return unsupported("tokenizer.ggml.model: expected llama, gpt2 or bert, found '" + std::string(*model) +
                       "'");
  }

  const gguf::Value* tokens = f.get_array("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->elem_type != gguf::ValueType::kString || tokens->items.empty()) {
    return corrupt("tokenizer.ggml.tokens: expected a non-empty array of strings");
  }
  if (tokens->items.size() > static_cast<size_t>(INT32_MAX / 2)) {
    return corrupt("tokenizer.ggml.tokens: too many tokens (" + std::to_string(tokens->items.size()) + ")");
  }
  const size_t n = tokens->items.size();
  const gguf::Value* scores = f.get_array("tokenizer.ggml.scores");
  const gguf::Value* types = f.get_array("tokenizer.ggml.token_type");
  if (scores != nullptr && scores->items.size() != n) {
    return corrupt("tokenizer.ggml.scores: expected " + std::to_string(n) + " scores, found " +
                   std::to_string(scores->items.size()));
  }
  if (types != nullptr && types->items.size() != n) {
    return corrupt("tokenizer.ggml.token_type: expected " + std::to_string(n) + " types, found " +
                   std::to_string(types->items.size()));
  }
  v->text.reserve(n);
  v->score.resize(n, 0.0f);
  v->attr.resize(n, kAttrNormal);
  for (size_t i = 0; i < n; ++i) {
    v->text.emplace_back(tokens->items[i].s);
    if (scores != nullptr) v->score[i] = static_cast<float>(scores->items[i].as_f64().value_or(0.0));
    if (types != nullptr) v->attr[i] = attr_from_type(types->items[i].as_i64().value_or(1));
    v->max_token_len = std::max(v->max_token_len, v->text[i].size());
  }
  v->token_to_id.build(v->text);
  v->spm_isolated.fill(true);
  for (const std::string& t : v->text) {
    if (t.size() < 2) continue;
    for (const char c : t) {
      if (static_cast<uint8_t>(c) < 128) v->spm_isolated[static_cast<size_t>(c)] = false;
    }
  }
  const auto n_tokens = static_cast<int32_t>(n);

  // Defaults per model type, as llama.cpp's llama_vocab::impl::load.
  switch (v->type) {
    case VocabType::kSpm:
      v->bos = 1, v->eos = 2, v->unk = 0;
      v->add_space_prefix = true, v->add_bos = true;
      break;
    case VocabType::kBpe: v->bos = 11, v->eos = 11; break;
    case VocabType::kWpm:
      v->bos = 101, v->unk = 100, v->sep = 102, v->pad = 0, v->mask = 103;
      v->add_bos = true, v->add_sep = true;
      break;
  }
  for (int32_t* id : {&v->bos, &v->eos, &v->unk, &v->sep, &v->pad, &v->mask}) {
    if (*id >= n_tokens) *id = kNoToken;
  }

  if (v->type == VocabType::kBpe) {
    const gguf::Value* merges = f.get_array("tokenizer.ggml.merges");
    if (merges == nullptr || merges->elem_type != gguf::ValueType::kString) {
      return corrupt("tokenizer.ggml.merges: expected an array of strings for a gpt2 tokenizer");
    }
    add_merges(*merges, *v);
    v->pre = std::string(f.get_string("tokenizer.ggml.pre").value_or("default"));
    if (!pre_tokenizer_regexes(v->pre)) {
      return unsupported("tokenizer.ggml.pre: unknown pre-tokenizer type '" + v->pre + "'");
    }
    static constexpr std::string_view kLlama3Names[] = {"llama3",    "llama-v3", "llama-bpe", "falcon3",
                                                        "falcon-h1", "pixtral",  "midm-2.0",  "lfm2"};
    if (std::find(std::begin(kLlama3Names), std::end(kLlama3Names), v->pre) != std::end(kLlama3Names)) {
      v->ignore_merges = true, v->add_bos = true;
    }
  } else {
    v->pre = std::string(f.get_string("tokenizer.ggml.pre").value_or("default"));
  }

  PADDOCK_TRY(read_id(f, "tokenizer.ggml.bos_token_id", n_tokens, v->bos));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.cls_token_id", n_tokens, v->bos));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.eos_token_id", n_tokens, v->eos));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.eot_token_id", n_tokens, v->eot));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.eom_token_id", n_tokens, v->eom));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.unknown_token_id", n_tokens, v->unk));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.seperator_token_id", n_tokens, v->sep));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.padding_token_id", n_tokens, v->pad));
  PADDOCK_TRY(read_id(f, "tokenizer.ggml.mask_token_id", n_tokens, v->mask));
  read_bool(f, "tokenizer.ggml.add_bos_token", v->add_bos);
  read_bool(f, "tokenizer.ggml.add_eos_token", v->add_eos);
  read_bool(f, "tokenizer.ggml.add_sep_token", v->add_sep);
  read_bool(f, "tokenizer.ggml.add_space_prefix", v->add_space_prefix);
  read_bool(f, "tokenizer.ggml.remove_extra_whitespaces", v->remove_extra_whitespaces);

  // End of turn / generation: named ids plus the well-known texts, which become control tokens.
  if (v->eot == kNoToken) {
    for (const std::string_view t : kEotTexts) {
      if (const int32_t id = v->find(t); id >= 0) {
        v->eot = id;
        break;
      }
    }
  }
  for (const std::string_view t : kEogTexts) {
    if (const int32_t id = v->find(t); id >= 0) {
      v->eog.push_back(id);
      v->attr[static_cast<size_t>(id)] |= kAttrControl;
      v->attr[static_cast<size_t>(id)] &= ~static_cast<uint32_t>(kAttrUserDefined | kAttrNormal);
    }
  }
  for (const int32_t id : {v->eos, v->eot, v->eom}) {
    if (id >= 0) v->eog.push_back(id);
  }
  std::sort(v->eog.begin(), v->eog.end());
  v->eog.erase(std::unique(v->eog.begin(), v->eog.end()), v->eog.end());
  mark_harmony_tokens(v.get());

  for (int32_t id = 0; id < n_tokens; ++id) {
    if (v->attr[static_cast<size_t>(id)] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
      v->special_tokens.push_back(id);
    }
  }
  std::stable_sort(v->special_tokens.begin(), v->special_tokens.end(), [&](int32_t a, int32_t b) {
    return v->text[static_cast<size_t>(a)].size() > v->text[static_cast<size_t>(b)].size();
  });

  // Phi-3 strips spaces to the right of its special tokens (llama.cpp sets this by model name).
  std::string name(f.get_string("general.name").value_or(""));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (const int32_t id : v->special_tokens) v->attr[static_cast<size_t>(id)] |= kAttrRstrip;
    if (const int32_t id = v->find("</s>"); id >= 0) v->attr[static_cast<size_t>(id)] |= kAttrRstrip;
    for (const std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const int32_t id = v->find(t); id >= 0) v->attr[static_cast<size_t>(id)] &= ~kAttrRstrip;
    }
  }

  for (int b = 0; b < 256; ++b) {
    int32_t id = kNoToken;
    if (v->type == VocabType::kBpe) {
      id = v->find(byte_to_unicode(static_cast<uint8_t>(b)));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
      id = v->find(hex);
      if (id < 0) id = v->find(std::string(1, static_cast<char>(b)));
    }
    v->byte_token[static_cast<size_t>(b)] = id;
  }
  return v;
}

}  // namespace paddock::tok
