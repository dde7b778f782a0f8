#include "base/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/check.h"

namespace paddock {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  PADDOCK_CHECK(impl_->ctx != nullptr);
  PADDOCK_CHECK(EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1);
}

Sha256::~Sha256() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256::update(const void* data, size_t n) { PADDOCK_CHECK(EVP_DigestUpdate(impl_->ctx, data, n) == 1); }

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  PADDOCK_CHECK(EVP_DigestFinal_ex(impl_->ctx, md, &len) == 1);
  static const char* kHex = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned i = 0; i < len; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

Result<std::string> sha256_file_hex(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(errno == ENOENT ? Code::kNotFound : Code::kIo, path + ": " + std::strerror(errno));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.update(buf.data(), n);
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) return io_error(path + ": read failed");
  return h.hex_digest();
}

}  // namespace paddock
