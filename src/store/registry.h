// Pull and push of models over the OCI distribution protocol Ollama's registry speaks
// (registry.ollama.ai, or any Docker distribution v2 registry such as docker-registry).
// Invariants: a pulled blob becomes visible in the store only after its sha256 matched the
// manifest (Store::import_blob_file); a download in progress lives in
// blobs/.paddock-tmp-partial-sha256-<hex> (ignored by readers, removed by prune when stale)
// and the next pull continues it with a Range request; the manifest is written last.
// Progress events are the lines Ollama's /api/pull and /api/push stream.
//   PADDOCK_TRY(pull_model(store, name, {.insecure = true}, [](const ProgressEvent& e) {
//     std::puts(e.status.c_str()); return true; }));
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "store/name.h"
#include "store/store.h"

namespace paddock::store {

// {"status":"pulling 1a2b3c4d5e6f","digest":"sha256:...","total":N,"completed":M}; digest
// empty and total/completed 0 for plain status lines ("pulling manifest", "success").
struct ProgressEvent {
  std::string status;
  std::string digest;
  uint64_t total = 0, completed = 0;
};
// Returning false cancels the transfer (Code::kCancelled); a pull keeps its partial files.
using ProgressFn = std::function<bool(const ProgressEvent&)>;

struct RegistryOptions {
  bool insecure = false;                             // allow plain http (and use it even for https names)
  int max_retries = 6;                               // per blob, for network errors, stalls and 5xx
  std::chrono::milliseconds retry_base_delay{1000};  // doubled after each retry
  int max_redirects = 10;
  long stall_timeout_s = 30;
  std::string user_agent = "paddock/0 (registry client)";
  // True cancels the transfer (kCancelled), also in the middle of a request or a retry wait.
  std::function<bool()> cancelled;
};

// Pulls `name` from its registry into `store`: "pulling manifest", per blob "pulling <12hex>"
// with total/completed, "verifying sha256 digest", "writing manifest", "success". Blobs
// already in the store are skipped. A 404 manifest gives NotFound "pull model manifest: file
// does not exist"; a blob with the wrong bytes gives Corrupt "digest mismatch, expected
// sha256:..., got sha256:..." and leaves no blob behind.
Status pull_model(Store& store, const Name& name, const RegistryOptions& opts, const ProgressFn& progress);

// Pushes the local model `name` to its registry: "retrieving manifest", per blob
// "pushing <12hex>" (existing blobs skipped, layers with `from` mounted from that repository
// on the same registry when it has them), "pushing manifest", "success".
Status push_model(Store& store, const Name& name, const RegistryOptions& opts, const ProgressFn& progress);

}  // namespace paddock::store
