// Blob digests. The only accepted spelling is "sha256:<64 lowercase hex>" or
// "sha256-<64 lowercase hex>"; anything else is refused, so a digest can never name a
// path outside blobs/. File names always use the '-' form (Ollama's BlobsPath).
//   PADDOCK_ASSIGN(Digest d, Digest::parse("sha256:ab..")); d.file_name();  // "sha256-ab.."
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "base/status.h"

namespace paddock::store {

class Digest {
 public:
  static Result<Digest> parse(std::string_view s);
  // From a bare 64-hex sha256 (our own hashing output); validated like parse().
  static Result<Digest> from_hex(std::string_view hex);
  static bool is_valid(std::string_view s);

  Digest() = default;
  const std::string& hex() const { return hex_; }
  std::string str() const { return "sha256:" + hex_; }        // manifest / API form
  std::string file_name() const { return "sha256-" + hex_; }  // blobs/ file name
  std::string short_id() const { return hex_.substr(0, 12); }
  bool empty() const { return hex_.empty(); }

  auto operator<=>(const Digest&) const = default;

 private:
  explicit Digest(std::string hex) : hex_(std::move(hex)) {}
  std::string hex_;
};

}  // namespace paddock::store
