// Fuzzes Name::parse and Digest::parse: no crash, and every accepted name yields a manifest
// path that stays inside manifests/ and parses back to the same name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "store/name.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  (void)paddock::store::Digest::parse(s);
  auto n = paddock::store::Name::parse(s);
  if (!n.ok()) return 0;
  const std::string path = n->manifest_path();
  if (path.find("..") == 0 || path.find("/../") != std::string::npos ||
      path.find("/./") != std::string::npos || path.find('\0') != std::string::npos ||
      path.find('\\') != std::string::npos || path[0] == '/')
    std::abort();
  auto back = paddock::store::Name::from_manifest_path(path);
  if (!back.ok() || !back->equal_fold(*n)) std::abort();
  auto again = paddock::store::Name::parse(n->display_shortest());
  if (!again.ok() || !again->equal_fold(*n)) std::abort();
  return 0;
}
