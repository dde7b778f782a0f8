#include "cli/repl_placeholder.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cli/repl_internal.h"

namespace paddock::cli {

namespace {

bool g_placeholder_shown = false;  // only the REPL's thread reads keys

bool read_byte(FILE* in, unsigned char* b) {
  for (;;) {
    const ssize_t n = ::read(fileno(in), b, 1);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR && !interrupt_pending()) continue;
    return false;  // end of input, or Ctrl+C: readline returns and the prompt reacts
  }
}

int read_key(FILE* in) {
  unsigned char b = 0;
  if (!read_byte(in, &b)) return -1;
  if (g_placeholder_shown) {  // a key came: erase the hint before libedit echoes it
    std::fputs("\x1b[K", stdout);
    std::fflush(stdout);
    g_placeholder_shown = false;
  }
  const int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : -1;
  if (extra < 0) return 0xFFFD;
  int code = extra == 0 ? b : b & (0x3F >> extra);
  for (int i = 0; i < extra; ++i) {
    unsigned char c = 0;
    if (!read_byte(in, &c) || (c & 0xC0) != 0x80) return 0xFFFD;
    code = (code << 6) | (c & 0x3F);
  }
  return code;
}

}  // namespace

void show_placeholder(std::string_view prompt) {
  g_placeholder_shown = true;
  std::printf("%.*s\x1b[38;5;245m%.*s\x1b[0m\r", static_cast<int>(prompt.size()), prompt.data(),
              static_cast<int>(kPlaceholder.size()), kPlaceholder.data());
  std::fflush(stdout);
}

void install_placeholder_key_reader() { rl_getc_function = read_key; }

}  // namespace paddock::cli
