#include "store/manifest.h"

#include <nlohmann/json.hpp>

#include "store/go_json.h"

namespace paddock::store {
namespace {

using nlohmann::json;

constexpr std::string_view kKnownLayerTypes[] = {
    kMediaModel,  kMediaAdapter,  kMediaProjector, kMediaDraft, kMediaTemplate, kMediaPrompt, kMediaSystem,
    kMediaParams, kMediaMessages, kMediaLicense,   kMediaEmbed, kMediaTensor,   kMediaJson};

Result<json> parse_json(std::string_view bytes, size_t max_bytes, std::string_view what) {
  if (bytes.size() > max_bytes)
    return corrupt(std::string(what) + ": " + std::to_string(bytes.size()) + " bytes, at most " +
                   std::to_string(max_bytes) + " expected");
  json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return corrupt(std::string(what) + ": not valid JSON");
  if (!j.is_object()) return corrupt(std::string(what) + ": expected a JSON object, found " + j.type_name());
  return j;
}

Result<std::string> get_string(const json& j, const char* key, std::string_view what, bool required) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return corrupt(std::string(what) + ": missing \"" + key + "\"");
    return std::string();
  }
  if (!it->is_string())
    return corrupt(std::string(what) + ": \"" + key + "\" must be a string, found " + it->type_name());
  return it->get<std::string>();
}

Result<Layer> parse_layer(const json& j, std::string_view what, bool is_config) {
  if (!j.is_object()) return corrupt(std::string(what) + ": expected an object, found " + j.type_name());
  Layer l;
  PADDOCK_ASSIGN(l.media_type, get_string(j, "mediaType", what, true));
  if (is_config ? l.media_type != kMediaConfig : !is_known_layer_media_type(l.media_type))
    return corrupt(std::string(what) + ": unknown media type \"" + l.media_type.substr(0, 100) + "\"" +
                   (is_config ? " (expected " + std::string(kMediaConfig) + ")" : ""));
  PADDOCK_ASSIGN(std::string digest, get_string(j, "digest", what, true));
  auto d = Digest::parse(digest);
  if (!d) return d.status().with_context(std::string(what));
  l.digest = std::move(d).value();
  const auto size = j.find("size");
  if (size == j.end() || !size->is_number_unsigned())
    return corrupt(std::string(what) + ": \"size\" must be a non-negative integer");
  l.size = size->get<uint64_t>();
  if (l.size > kMaxBlobSize)
    return corrupt(std::string(what) + ": size " + std::to_string(l.size) + " is larger than the " +
                   std::to_string(kMaxBlobSize) + " bytes a blob may have");
  PADDOCK_ASSIGN(l.from, get_string(j, "from", what, false));
  PADDOCK_ASSIGN(l.name, get_string(j, "name", what, false));
  return l;
}

void append_layer(std::string& out, const Layer& l) {
  out += "{\"mediaType\":";
  append_go_json_string(out, l.media_type);
  out += ",\"digest\":";
  append_go_json_string(out, l.digest.str());
  out += ",\"size\":" + std::to_string(l.size);
  if (!l.from.empty()) {
    out += ",\"from\":";
    append_go_json_string(out, l.from);
  }
  if (!l.name.empty()) {
    out += ",\"name\":";
    append_go_json_string(out, l.name);
  }
  out += '}';
}

void append_field(std::string& out, std::string_view key, std::string_view value) {
  out += ',';
  append_go_json_string(out, key);
  out += ':';
  append_go_json_string(out, value);
}

void append_list(std::string& out, std::string_view key, const std::vector<std::string>& list) {
  out += ',';
  append_go_json_string(out, key);
  if (list.empty()) {
    out += ":null";
    return;
  }
  out += ":[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ',';
    append_go_json_string(out, list[i]);
  }
  out += ']';
}

Result<std::vector<std::string>> get_string_list(const json& j, const char* key) {
  std::vector<std::string> out;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return corrupt(std::string("config: \"") + key + "\" must be an array of strings");
  for (const auto& e : *it) {
    if (!e.is_string()) return corrupt(std::string("config: \"") + key + "\" must be an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<int64_t> get_int(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return int64_t{0};
  if (!it->is_number_integer()) return corrupt(std::string("config: \"") + key + "\" must be an integer");
  return it->get<int64_t>();
}

}  // namespace

bool is_known_layer_media_type(std::string_view media_type) {
  for (const auto t : kKnownLayerTypes)
    if (t == media_type) return true;
  return false;
}

Result<Manifest> Manifest::parse(std::string_view bytes) {
  PADDOCK_ASSIGN(json j, parse_json(bytes, kMaxManifestBytes, "manifest"));
  const auto version = j.find("schemaVersion");
  if (version == j.end() || !version->is_number_integer() || version->get<int64_t>() != 2)
    return corrupt("manifest: expected \"schemaVersion\": 2");
  PADDOCK_ASSIGN(std::string media_type, get_string(j, "mediaType", "manifest", false));
  if (!media_type.empty() && media_type != kMediaManifest)
    return corrupt("manifest: media type \"" + media_type.substr(0, 100) + "\", expected " +
                   std::string(kMediaManifest));
  Manifest m;
  const auto config = j.find("config");
  if (config == j.end()) return corrupt("manifest: missing \"config\"");
  PADDOCK_ASSIGN(m.config, parse_layer(*config, "manifest config", true));
  const auto layers = j.find("layers");
  if (layers == j.end() || !layers->is_array()) return corrupt("manifest: \"layers\" must be an array");
  if (layers->size() > kMaxLayers)
    return corrupt("manifest: " + std::to_string(layers->size()) + " layers, at most " +
                   std::to_string(kMaxLayers) + " expected");
  for (size_t i = 0; i < layers->size(); ++i) {
    PADDOCK_ASSIGN(Layer l, parse_layer((*layers)[i], "manifest layer " + std::to_string(i), false));
    m.layers.push_back(std::move(l));
  }
  return m;
}

std::string Manifest::to_json() const {
  std::string out = "{\"schemaVersion\":2,\"mediaType\":";
  append_go_json_string(out, kMediaManifest);
  out += ",\"config\":";
  append_layer(out, config);
  out += ",\"layers\":[";
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i) out += ',';
    append_layer(out, layers[i]);
  }
  return out + "]}\n";
}

uint64_t Manifest::total_size() const {
  uint64_t total = config.size;  // sizes are each below 2^42 and at most 4096 layers: no overflow
  for (const auto& l : layers) total += l.size;
  return total;
}

std::vector<Digest> Manifest::digests() const {
  std::vector<Digest> out{config.digest};
  for (const auto& l : layers) out.push_back(l.digest);
  return out;
}

Result<ModelConfig> ModelConfig::parse(std::string_view bytes) {
  PADDOCK_ASSIGN(json j, parse_json(bytes, kMaxConfigBytes, "config"));
  ModelConfig c;
  PADDOCK_ASSIGN(c.model_format, get_string(j, "model_format", "config", false));
  PADDOCK_ASSIGN(c.model_family, get_string(j, "model_family", "config", false));
  PADDOCK_ASSIGN(c.model_families, get_string_list(j, "model_families"));
  PADDOCK_ASSIGN(c.model_type, get_string(j, "model_type", "config", false));
  PADDOCK_ASSIGN(c.file_type, get_string(j, "file_type", "config", false));
  PADDOCK_ASSIGN(c.renderer, get_string(j, "renderer", "config", false));
  PADDOCK_ASSIGN(c.parser, get_string(j, "parser", "config", false));
  PADDOCK_ASSIGN(c.requires_version, get_string(j, "requires", "config", false));
  PADDOCK_ASSIGN(c.capabilities, get_string_list(j, "capabilities"));
  PADDOCK_ASSIGN(c.context_length, get_int(j, "context_length"));
  PADDOCK_ASSIGN(c.embedding_length, get_int(j, "embedding_length"));
  PADDOCK_ASSIGN(c.base_name, get_string(j, "base_name", "config", false));
  PADDOCK_ASSIGN(c.architecture, get_string(j, "architecture", "config", false));
  PADDOCK_ASSIGN(c.os, get_string(j, "os", "config", false));
  return c;
}

std::string ModelConfig::to_json() const {
  std::string out = "{\"model_format\":";
  append_go_json_string(out, model_format);
  append_field(out, "model_family", model_family);
  append_list(out, "model_families", model_families);
  append_field(out, "model_type", model_type);
  append_field(out, "file_type", file_type);
  if (!renderer.empty()) append_field(out, "renderer", renderer);
  if (!parser.empty()) append_field(out, "parser", parser);
  if (!requires_version.empty()) append_field(out, "requires", requires_version);
  if (!capabilities.empty()) append_list(out, "capabilities", capabilities);
  if (context_length != 0) out += ",\"context_length\":" + std::to_string(context_length);
  if (embedding_length != 0) out += ",\"embedding_length\":" + std::to_string(embedding_length);
  if (!base_name.empty()) append_field(out, "base_name", base_name);
  append_field(out, "architecture", architecture);
  append_field(out, "os", os);
  return out + "}";
}

std::string go_arch() {
#if defined(__x86_64__)
  return "amd64";
#elif defined(__aarch64__)
  return "arm64";
#elif defined(__i386__)
  return "386";
#else
  return "unknown";
#endif
}

std::string go_os() {
#if defined(__linux__)
  return "linux";
#elif defined(__APPLE__)
  return "darwin";
#else
  return "unknown";
#endif
}

}  // namespace paddock::store
