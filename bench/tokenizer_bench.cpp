// Tokenizer speed on fixtures/tokenizer/war-and-peace.txt (3.2 MB) as one string, single
// thread, vocabulary load excluded: prints seconds and tokens/s per vocabulary (best of 3).
//   tokenizer_bench [FIXTURES_DIR]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/mapped_file.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

int main(int argc, char** argv) {
  const char* env = std::getenv("PADDOCK_FIXTURES");
  const std::string dir =
      std::string(argc > 1 ? argv[1] : (env && *env ? env : "../shared/fixtures")) + "/tokenizer/";
  auto text = paddock::read_file(dir + "war-and-peace.txt");
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().to_string().c_str());
    return 1;
  }
  for (const char* name : {"vocab-llama3.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"}) {
    auto f = paddock::gguf::File::open(dir + name);
    if (!f.ok()) continue;
    auto tok = paddock::Tokenizer::load(**f);
    if (!tok.ok()) continue;
    double best = 1e9;
    size_t n = 0;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      n = (*tok)->encode(*text, false, false).size();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("%-28s %8zu tokens  %.3f s  %.0f tokens/s\n", name, n, best, static_cast<double>(n) / best);
  }
  return 0;
}
