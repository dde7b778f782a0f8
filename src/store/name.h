// Model names, Ollama's grammar: [scheme://][host/][namespace/]model[:tag][@digest].
// Missing parts take the defaults registry.ollama.ai / library / latest (scheme https).
// Invariants of a parsed Name: every part is 1-80 characters (host 1-350), starts with a
// letter, digit or '_', and continues with letters, digits, '_', '-', '.' (not in the
// namespace) or ':' (host only: a port). So no part is ".", "..", empty, or contains a
// path separator or NUL, and manifest_path() can never leave manifests/.
// Names compare case-insensitively (equal_fold), as Ollama resolves them; the casing given
// is kept for display and for the path of a new manifest.
//   PADDOCK_ASSIGN(Name n, Name::parse("llama3.2")); n.display_shortest();  // "llama3.2:latest"
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/digest.h"

namespace paddock::store {

inline constexpr std::string_view kDefaultHost = "registry.ollama.ai";
inline constexpr std::string_view kDefaultNamespace = "library";
inline constexpr std::string_view kDefaultTag = "latest";
inline constexpr std::string_view kDefaultScheme = "https";

class Name {
 public:
  // Parses and fills defaults; "invalid model name: ..." errors say which part is wrong.
  static Result<Name> parse(std::string_view s);
  // From a manifest path relative to manifests/: "<host>/<namespace>/<model>/<tag>".
  static Result<Name> from_manifest_path(std::string_view rel);

  const std::string& scheme() const { return scheme_; }
  const std::string& host() const { return host_; }
  const std::string& name_space() const { return namespace_; }
  const std::string& model() const { return model_; }
  const std::string& tag() const { return tag_; }
  const std::optional<Digest>& digest() const { return digest_; }

  // host/namespace/model:tag, always complete.
  std::string display_full() const;
  // Ollama's DisplayShortest: "stories:latest", "alice/stories:v1",
  // "example.com/alice/stories:v1" (tag always shown).
  std::string display_shortest() const;
  // "<host>/<namespace>/<model>/<tag>" relative to manifests/.
  std::string manifest_path() const;
  // "namespace/model" as used in registry URLs.
  std::string namespace_model() const;

  bool equal_fold(const Name& o) const;

 private:
  std::string scheme_{kDefaultScheme};
  std::string host_{kDefaultHost};
  std::string namespace_{kDefaultNamespace};
  std::string model_;
  std::string tag_{kDefaultTag};
  std::optional<Digest> digest_;
};

enum class NamePart { kHost, kNamespace, kModel, kTag };
// Character and length rules of one part (empty is invalid).
bool is_valid_name_part(NamePart kind, std::string_view s);

}  // namespace paddock::store
