// Manifests and config blobs in Ollama's format (Docker distribution manifest v2), parsed
// defensively and written byte for byte as Ollama's Go code writes them (compact JSON,
// Go escaping, key order of the Go structs; a manifest ends in '\n', a config does not).
// Invariants of a parsed Manifest: schemaVersion 2, known media types, valid digests,
// sizes within kMaxBlobSize, at most kMaxLayers layers.
//   PADDOCK_ASSIGN(Manifest m, Manifest::parse(bytes)); m.to_json();
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/digest.h"

namespace paddock::store {

inline constexpr std::string_view kMediaManifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view kMediaConfig = "application/vnd.docker.container.image.v1+json";
inline constexpr std::string_view kMediaModel = "application/vnd.ollama.image.model";
inline constexpr std::string_view kMediaAdapter = "application/vnd.ollama.image.adapter";
inline constexpr std::string_view kMediaProjector = "application/vnd.ollama.image.projector";
inline constexpr std::string_view kMediaDraft = "application/vnd.ollama.image.draft";
inline constexpr std::string_view kMediaTemplate = "application/vnd.ollama.image.template";
inline constexpr std::string_view kMediaPrompt = "application/vnd.ollama.image.prompt";  // legacy template
inline constexpr std::string_view kMediaSystem = "application/vnd.ollama.image.system";
inline constexpr std::string_view kMediaParams = "application/vnd.ollama.image.params";
inline constexpr std::string_view kMediaMessages = "application/vnd.ollama.image.messages";
inline constexpr std::string_view kMediaLicense = "application/vnd.ollama.image.license";
inline constexpr std::string_view kMediaEmbed = "application/vnd.ollama.image.embed";  // deprecated
inline constexpr std::string_view kMediaTensor = "application/vnd.ollama.image.tensor";
inline constexpr std::string_view kMediaJson = "application/vnd.ollama.image.json";

// Largest blob we accept a manifest to claim (4 TiB): bigger is an attack or corruption.
inline constexpr uint64_t kMaxBlobSize = uint64_t{1} << 42;
inline constexpr size_t kMaxLayers = 4096;
inline constexpr size_t kMaxManifestBytes = 4 << 20;
inline constexpr size_t kMaxConfigBytes = 1 << 20;

bool is_known_layer_media_type(std::string_view media_type);

struct Layer {
  std::string media_type;
  Digest digest;
  uint64_t size = 0;
  std::string from;  // source model (short name) when inherited; omitted when empty
  std::string name;  // tensor name for tensor layers; omitted when empty
};

struct Manifest {
  Layer config;
  std::vector<Layer> layers;

  static Result<Manifest> parse(std::string_view bytes);
  std::string to_json() const;  // with the trailing newline
  // Sum of all layer sizes plus the config's (what `list` shows).
  uint64_t total_size() const;
  // Every digest the manifest references, config first.
  std::vector<Digest> digests() const;
};

// The config blob (Ollama's model.ConfigV2, the fields a GGUF model uses).
struct ModelConfig {
  std::string model_format;  // "gguf"
  std::string model_family;
  std::vector<std::string> model_families;           // written as null when empty, like Go's nil slice
  std::string model_type;                            // parameter count label, "292.10K"
  std::string file_type;                             // "Q4_K_M"
  std::string renderer, parser, requires_version;    // omitted when empty
  std::vector<std::string> capabilities;             // omitted when empty
  int64_t context_length = 0, embedding_length = 0;  // omitted when 0
  std::string base_name;                             // omitted when empty
  std::string architecture;                          // "amd64"
  std::string os;                                    // "linux"

  static Result<ModelConfig> parse(std::string_view bytes);
  std::string to_json() const;  // no trailing newline (json.Marshal)
};

// GOARCH / GOOS spelling of the machine we run on ("amd64", "linux").
std::string go_arch();
std::string go_os();

}  // namespace paddock::store
