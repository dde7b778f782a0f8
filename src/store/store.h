// The model store, laid out exactly as Ollama lays it out, so an Ollama models folder works:
//   <root>/manifests/<host>/<namespace>/<model>/<tag>   manifest JSON
//   <root>/blobs/sha256-<hex>                           content-addressed blobs
// Invariants: a blob file is only ever visible under its final name after its bytes were
// written, fsynced and hash-verified (written to blobs/.paddock-tmp-*, then renamed); a
// manifest is replaced by rename, and only after every blob it names exists. Temp files are
// ignored by readers and removed by prune(). Writers take a lock on <root>/.paddock-lock:
// shared for adding (blob imports, manifest writes, a whole create), exclusive for removing
// (delete, prune), so a collection never deletes a blob that a concurrent create has
// written but not yet referenced.
//   PADDOCK_ASSIGN(Store s, Store::open(Store::default_root()));
//   PADDOCK_ASSIGN(auto models, s.list());
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/digest.h"
#include "store/manifest.h"
#include "store/name.h"
#include "store/params.h"

namespace paddock::store {

struct ModelSummary {
  Name name;
  std::string digest;            // hex sha256 of the manifest file bytes (the "ID")
  uint64_t size = 0;             // all layers + config
  int64_t modified_unix_ns = 0;  // manifest mtime
  ModelConfig config;
};

struct ModelInfo {
  Name name;  // with the casing found on disk
  Manifest manifest;
  std::string digest;  // hex sha256 of the manifest bytes
  int64_t modified_unix_ns = 0;
  ModelConfig config;
  std::string model_path;    // blob path of the model layer ("" if none)
  std::string parent_model;  // the model layer's "from"
  std::vector<std::string> adapter_paths, projector_paths;
  std::optional<std::string> template_text;
  std::string system;
  Params params;
  std::vector<Message> messages;
  std::vector<std::string> licenses;
};

// Called at named points inside writes ("blob.temp_written", "blob.renamed",
// "manifest.temp_written", "manifest.renamed"); tests use it to kill a writer there.
using FaultHook = std::function<void(std::string_view point)>;

// Reads up to n bytes into buf; returns 0 at the end of the stream.
using ReadFn = std::function<Result<size_t>(char* buf, size_t n)>;

class Store {
 public:
  // A held flock on <root>/.paddock-lock; released on destruction.
  class Lock {
   public:
    Lock() = default;
    Lock(Lock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Lock& operator=(Lock&& o) noexcept;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    ~Lock();

   private:
    friend class Store;
    explicit Lock(int fd) : fd_(fd) {}
    int fd_ = -1;
  };

  // Opens (creating manifests/ and blobs/ if missing) the store at `root`.
  static Result<Store> open(const std::string& root);
  // PADDOCK_MODELS, then OLLAMA_MODELS, else ~/.paddock/models.
  static std::string default_root();

  const std::string& root() const { return root_; }
  std::string blob_path(const Digest& d) const;
  bool has_blob(const Digest& d) const;
  void set_fault_hook(FaultHook hook) { fault_hook_ = std::move(hook); }

  Result<Lock> lock(bool exclusive) const;

  // All valid manifests, newest first. Unreadable ones are skipped with a warning.
  Result<std::vector<ModelSummary>> list() const;
  // The stored name equal to `name` ignoring case (exact casing first); NotFound if none.
  Result<Name> resolve(const Name& name) const;
  Result<Manifest> read_manifest(const Name& name) const;
  // Manifest, config and the text layers (each hash-verified); the model layer's size checked.
  Result<ModelInfo> show(const Name& name) const;
  // Re-hashes every blob of the model (model layer included).
  Status verify(const Name& name) const;

  Status copy(const Name& src, const Name& dst);
  // Removes the manifest, then every blob of it that no other manifest references.
  Status remove(const Name& name);

  // Blob imports: streamed to a temp file while hashing, verified against `expected` when
  // given ("digest mismatch, expected ..., got ..."), then renamed into place. An existing
  // blob is kept (and touched). Return the digest.
  Result<Digest> import_blob(const ReadFn& read, const std::optional<Digest>& expected = std::nullopt);
  Result<Digest> import_blob_file(const std::string& path,
                                  const std::optional<Digest>& expected = std::nullopt);
  Result<Digest> import_blob_bytes(std::string_view bytes);

  // Writes `m` for `name` atomically, after checking that every blob exists with its size.
  Status write_manifest(const Name& name, const Manifest& m);

  // Deletes the given blobs unless some manifest still references them (exclusive lock).
  Status remove_unreferenced(const std::vector<Digest>& candidates);

  struct PruneReport {
    size_t blobs_removed = 0, temp_files_removed = 0;
  };
  // Removes blobs no manifest references and stale temp files, both only when older than
  // `grace` (a concurrent writer's fresh files are left alone), then empty manifest dirs.
  // Refuses when a manifest cannot be parsed (its blobs would look unreferenced).
  Result<PruneReport> prune(std::chrono::seconds grace = std::chrono::hours(1));

  // A fresh temp path in blobs/ (ignored by readers, removed by prune).
  std::string temp_path() const;

 private:
  explicit Store(std::string root) : root_(std::move(root)) {}
  std::string manifest_file(const Name& name) const;
  void fault(std::string_view point) const {
    if (fault_hook_) fault_hook_(point);
  }
  // Every manifest on disk: names with their parsed manifests; `all_ok` false if one failed.
  struct Scan {
    std::vector<std::pair<Name, Manifest>> manifests;
    bool all_ok = true;
  };
  Scan scan() const;
  Status write_file_atomic(const std::string& dest, std::string_view bytes, std::string_view hook_prefix);

  std::string root_;
  FaultHook fault_hook_;
};

// The Modelfile `show --modelfile` prints, formatted as Ollama formats it.
std::string render_modelfile(const ModelInfo& m, std::string_view program = "ollama");
// /api/show "parameters": one "%-30s %#v" line per value.
std::string render_parameters(const Params& p);

}  // namespace paddock::store
