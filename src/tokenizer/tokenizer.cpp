#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cctype>

#include "tokenizer/algorithms.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace paddock {

namespace {

using tok::Vocab;
using tok::VocabType;

constexpr std::string_view kSpmSpace = "\xe2\x96\x81";

// A piece of the input: raw text (a byte range) or an already recognised special token.
struct Fragment {
  int32_t token;  // kNoToken for raw text
  size_t off;
  size_t len;
};

bool is_space_char(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// llama.cpp's tokenizer_st_partition: special tokens, longest first, split every raw fragment
// at each occurrence; control (and unknown) tokens only when parse_special.
std::vector<Fragment> partition(const Vocab& v, std::string_view text, bool parse_special) {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;  // no fragment at all, so SentencePiece adds no space either
  frags.push_back({tok::kNoToken, 0, text.size()});
  std::vector<Fragment> next;
  for (const int32_t id : v.special_tokens) {
    const uint32_t attr = v.attr[static_cast<size_t>(id)];
    if (!parse_special && (attr & (tok::kAttrControl | tok::kAttrUnknown))) continue;
    const std::string_view st = v.text[static_cast<size_t>(id)];
    if (st.empty()) continue;
    next.clear();
    bool changed = false;
    for (const Fragment& fr : frags) {
      if (fr.token != tok::kNoToken) {
        next.push_back(fr);
        continue;
      }
      size_t base = fr.off;
      size_t len = fr.len;
      while (true) {
        const size_t match = text.substr(0, base + len).find(st, base);
        if (match == std::string_view::npos) {
          if (len > 0) next.push_back({tok::kNoToken, base, len});
          break;
        }
        changed = true;
        if (match > base) {
          size_t left = match - base;
          if (attr & tok::kAttrLstrip) {
            while (left > 0 && is_space_char(text[base + left - 1])) --left;
          }
          if (left > 0) next.push_back({tok::kNoToken, base, left});
        }
        next.push_back({id, 0, 0});
        size_t right_off = match + st.size();
        size_t right_len = base + len - right_off;
        if (attr & tok::kAttrRstrip) {
          while (right_len > 0 && is_space_char(text[right_off])) ++right_off, --right_len;
        }
        base = right_off;
        len = right_len;
        if (len == 0) break;
      }
    }
    if (changed) frags.swap(next);
  }
  return frags;
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::load(const gguf::File& f) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  PADDOCK_ASSIGN(t->vocab_, tok::load_vocab(f));
  if (t->vocab_->type == VocabType::kBpe) {
    const auto regexes = tok::pre_tokenizer_regexes(t->vocab_->pre);
    PADDOCK_ASSIGN(t->pre_, tok::PreTokenizer::create(*regexes));
  }
  return t;
}

void Tokenizer::encode_fragment(std::string_view text, bool& prev_special, std::vector<int32_t>& out) const {
  const Vocab& v = *vocab_;
  switch (v.type) {
    case VocabType::kSpm: {
      std::string escaped;
      escaped.reserve(text.size() + text.size() / 2 + 3);
      if (v.add_space_prefix && prev_special) escaped += kSpmSpace;
      for (const char c : text) {
        if (c == ' ')
          escaped += kSpmSpace;
        else
          escaped += c;
      }
      tok::spm_tokenize(v, escaped, out);
      break;
    }
    case VocabType::kBpe: tok::bpe_tokenize(v, *pre_, text, out); break;
    case VocabType::kWpm: tok::wpm_tokenize(v, text, out); break;
  }
  prev_special = false;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const Vocab& v = *vocab_;
  std::vector<int32_t> out;
  if (add_special && v.add_bos && v.bos >= 0) out.push_back(v.bos);
  bool prev_special = true;  // SentencePiece prefixes a space to text at the start or after a special token
  for (const Fragment& fr : partition(v, text, parse_special)) {
    if (fr.token != tok::kNoToken) {
      out.push_back(fr.token);
      prev_special = true;
    } else {
      encode_fragment(text.substr(fr.off, fr.len), prev_special, out);
    }
  }
  if (add_special) {
    if (v.type == VocabType::kWpm) {
      if (v.add_sep && v.sep >= 0) out.push_back(v.sep);
    } else if (v.add_eos && v.eos >= 0) {
      out.push_back(v.eos);
    }
  }
  return out;
}

std::string Tokenizer::piece(int32_t id, bool special) const {
  const Vocab& v = *vocab_;
  if (id < 0 || id >= v.n_tokens()) return {};
  const uint32_t attr = v.attr[static_cast<size_t>(id)];
  const std::string& text = v.text[static_cast<size_t>(id)];
  constexpr uint32_t kAttrSpecial = tok::kAttrUnknown | tok::kAttrControl;
  if (!special && (attr & kAttrSpecial)) return {};
  if (attr & (kAttrSpecial | tok::kAttrUserDefined)) return text;
  if (v.type == VocabType::kBpe) {
    if (!(attr & tok::kAttrNormal)) return {};
    std::string out;
    const tok::Utf8Text t = tok::decode_utf8(text);
    for (size_t i = 0; i < t.cpts.size(); ++i) {
      const int b = tok::unicode_to_byte(t.cpts[i]);
      if (b >= 0) {
        out.push_back(static_cast<char>(b));
      } else {
        out.append(text, t.offs[i], t.offs[i + 1] - t.offs[i]);
      }
    }
    return out;
  }
  if (attr & tok::kAttrNormal) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      if (std::string_view(text).substr(i, 3) == kSpmSpace) {
        out.push_back(' ');
        i += 3;
      } else {
        out.push_back(text[i++]);
      }
    }
    return out;
  }
  if (attr & tok::kAttrByte) {
    // "<0xXX>"
    if (text.size() == 6 && std::isxdigit(static_cast<unsigned char>(text[3])) &&
        std::isxdigit(static_cast<unsigned char>(text[4]))) {
      return std::string(1, static_cast<char>(std::stoi(text.substr(3, 2), nullptr, 16)));
    }
    return {};
  }
  return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool remove_special, bool unparse_special) const {
  const Vocab& v = *vocab_;
  bool remove_space = v.add_space_prefix;
  if (remove_special && v.add_bos && !ids.empty() && ids.front() == v.bos) {
    remove_space = false;
    ids = ids.subspan(1);
  }
  if (remove_special && v.add_eos && !ids.empty() && ids.back() == v.eos) ids = ids.first(ids.size() - 1);
  std::string out;
  for (const int32_t id : ids) {
    std::string p = piece(id, unparse_special);
    if (remove_space && !p.empty() && p.front() == ' ') p.erase(0, 1);
    remove_space = false;
    out += p;
  }
  return out;
}

int32_t Tokenizer::n_vocab() const { return vocab_->n_tokens(); }
int32_t Tokenizer::bos() const { return vocab_->bos; }
int32_t Tokenizer::eos() const { return vocab_->eos; }
int32_t Tokenizer::eot() const { return vocab_->eot; }
int32_t Tokenizer::unk() const { return vocab_->unk; }
int32_t Tokenizer::sep() const { return vocab_->sep; }
int32_t Tokenizer::pad() const { return vocab_->pad; }
bool Tokenizer::add_bos() const { return vocab_->add_bos; }
bool Tokenizer::add_eos() const { return vocab_->add_eos; }
bool Tokenizer::is_eog(int32_t id) const {
  return std::binary_search(vocab_->eog.begin(), vocab_->eog.end(), id);
}
std::string_view Tokenizer::token_text(int32_t id) const {
  return id >= 0 && id < n_vocab() ? std::string_view(vocab_->text[static_cast<size_t>(id)])
                                   : std::string_view();
}
std::string_view Tokenizer::model() const {
  switch (vocab_->type) {
    case VocabType::kSpm: return "llama";
    case VocabType::kBpe: return "gpt2";
    case VocabType::kWpm: return "bert";
  }
  return "";
}
std::string_view Tokenizer::pre() const { return vocab_->pre; }

std::string StreamingDetokenizer::push(int32_t id) {
  pending_ += tok_.piece(id, special_);
  const size_t keep = tok::incomplete_utf8_suffix(pending_);
  std::string out = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace paddock
