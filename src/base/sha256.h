// SHA-256 (OpenSSL underneath, which uses the CPU's SHA instructions). Blobs are named by
// their digest, so every byte the store accepts goes through here.
//   Sha256 h; h.update(bytes); std::string hex = h.hex_digest();
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace paddock {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string hex_digest();  // finalises; 64 lowercase hex characters

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string sha256_hex(std::string_view data);
Result<std::string> sha256_file_hex(const std::string& path);

}  // namespace paddock
