// `paddock tokenize --model FILE (--text T | --file F) [--json] [--special] [--bos]`: the ids of
// a text under a model's vocabulary. By default like llama.cpp's test vectors (no BOS/EOS,
// special tokens not parsed); --special parses special tokens, --bos adds BOS/EOS as the
// model says; --file is read byte-exact. Plain output is the ids separated by spaces.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/mapped_file.h"
#include "cli/commands.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace paddock::cli {

namespace {

constexpr char kUsage[] =
    "Usage: paddock tokenize --model FILE (--text T | --file F) [--json] [--special] [--bos]\n";

int fail(const std::string& msg) {
  std::fprintf(stderr, "Error: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int run_tokenize(int argc, char** argv) {
  std::string model, text, file;
  bool have_text = false, json = false, special = false, bos = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    if (a == "--model" || a == "-m") {
      if (!value(model)) return fail("--model needs a GGUF file");
    } else if (a == "--text") {
      if (!value(text)) return fail("--text needs a string");
      have_text = true;
    } else if (a == "--file") {
      if (!value(file)) return fail("--file needs a path");
    } else if (a == "--json") {
      json = true;
    } else if (a == "--special") {
      special = true;
    } else if (a == "--bos") {
      bos = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fputs(kUsage, stderr);
      return fail("unknown argument '" + std::string(a) + "'");
    }
  }
  if (model.empty() || have_text == !file.empty()) {
    std::fputs(kUsage, stderr);
    return fail("expected --model and exactly one of --text or --file");
  }
  if (!file.empty()) {
    auto content = read_file(file);
    if (!content.ok()) return fail(content.status().to_string());
    text = std::move(*content);
  }
  auto f = gguf::File::open(model);
  if (!f.ok()) return fail(f.status().with_context(model).to_string());
  auto tok = Tokenizer::load(**f);
  if (!tok.ok()) return fail(tok.status().with_context(model).to_string());
  const std::vector<int32_t> ids = (*tok)->encode(text, bos, special);
  if (json) {
    nlohmann::json j;
    j["ids"] = ids;
    auto& pieces = j["pieces"] = nlohmann::json::array();
    for (const int32_t id : ids) pieces.push_back((*tok)->piece(id, true));
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) line += ' ';
      line += std::to_string(ids[i]);
    }
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

}  // namespace paddock::cli
