// The layouts Ollama published for some architectures, translated at load into llama.cpp's,
// so each model/arch file reads one layout: a table with one row per translation (which
// files it recognises, what it renames and adds), applied by File::open/parse. A file that
// matches no row is left as it is. Ollama's own converter wrote these files before
// llama.cpp supported the architecture, and Ollama still serves them from its library.
//   gpt-oss (arch "gptoss"): keys gptoss.*, tensors attn_out, attn_sinks, ffn_norm.
//   gemma3: rope.global/local.freq_base, no rms epsilon; text and vision in one file.
//   Llama 3 files without a pre-tokenizer: llama-bpe.
// A row that matches a file it cannot translate (a missing tensor) leaves an error naming it.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "gguf/gguf.h"

namespace paddock::gguf {

// What a translation may do to a parsed File; new text lives as long as the File.
class LayoutEditor {
 public:
  explicit LayoutEditor(File& f) : f_(f) {}
  const File& file() const { return f_; }
  // Every key that starts with `from` starts with `to` instead.
  void rename_key_prefix(std::string_view from, std::string_view to);
  // Renames a key (no-op when absent), replacing `to` where both exist.
  void rename_key(std::string_view from, std::string_view to);
  // Adds the key, or replaces its value.
  void set_string(std::string_view key, std::string_view value);
  void set_u32(std::string_view key, uint32_t value);
  void set_f32(std::string_view key, float value);
  // Renames a tensor (no-op when absent); `to` must not exist.
  Status rename_tensor(std::string_view from, std::string_view to);
  // Records which translation the file went through (File::translated_from).
  void mark_translated(std::string_view name) { f_.translated_from_ = name; }

 private:
  std::string_view own(std::string_view s);
  void set(std::string_view key, Value v);
  void reindex();
  File& f_;
};

// Applies the first matching row of the table to f (File::open and parse call this).
Status translate_layout(File& f);

}  // namespace paddock::gguf
