#include "store/registry.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "base/mapped_file.h"
#include "store/manifest.h"
#include "store/registry_http.h"
#include "store/registry_url.h"

namespace paddock::store {
namespace {

constexpr auto kProgressInterval = std::chrono::milliseconds(60);
constexpr std::string_view kPartialPrefix = "/blobs/.paddock-tmp-partial-";

Status cancelled(std::string_view what) { return Status(Code::kCancelled, std::string(what) + " cancelled"); }

HttpOptions http_options(const RegistryOptions& o) {
  HttpOptions h;
  h.insecure = o.insecure;
  h.max_redirects = o.max_redirects;
  h.stall_timeout_s = o.stall_timeout_s;
  h.user_agent = o.user_agent;
  h.cancelled = o.cancelled;
  return h;
}

// Waits before retry `attempt`, in short steps so a cancel is seen within a tenth of a second.
void backoff(const RegistryOptions& o, int attempt) {
  const auto until =
      std::chrono::steady_clock::now() + o.retry_base_delay * (int64_t{1} << std::min(attempt, 6));
  while (std::chrono::steady_clock::now() < until && !(o.cancelled && o.cancelled())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool retryable(const Result<HttpResponse>& r) {
  if (!r) return r.status().code() == Code::kUnavailable;
  return r->status >= 500 || r->status == 429;
}

Result<HttpResponse> send_with_retry(RegistryHttp& http, const HttpRequest& req, const RegistryOptions& o) {
  for (int attempt = 0;; ++attempt) {
    Result<HttpResponse> r = http.send(req);
    if (!retryable(r) || attempt >= o.max_retries) return r;
    backoff(o, attempt);
    if (o.cancelled && o.cancelled()) return Status(Code::kCancelled, "cancelled");
  }
}

// "<what>: <status>: <body>", as Ollama reports registry errors.
Status http_error(std::string_view what, const HttpResponse& r) {
  std::string body = r.body.substr(0, 512);
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  Code code = r.status >= 500 ? Code::kUnavailable : Code::kInvalidArgument;
  if (r.status == 404) code = Code::kNotFound;
  return Status(code, std::string(what) + ": " + std::to_string(r.status) + ": " + body);
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

class Puller {
 public:
  Puller(Store& store, const Name& name, const RegistryOptions& opts, const ProgressFn& progress)
      : store_(store), name_(name), opts_(opts), progress_(progress), http_(http_options(opts)) {}

  Status run() {
    PADDOCK_TRY(emit({.status = "pulling manifest"}));
    PADDOCK_ASSIGN(Manifest m, fetch_manifest());
    PADDOCK_ASSIGN(Store::Lock held, store_.lock(false));
    std::vector<Layer> blobs{m.config};
    blobs.insert(blobs.end(), m.layers.begin(), m.layers.end());
    std::set<Digest> seen;
    std::vector<Layer> fetched;
    for (const Layer& l : blobs) {
      if (!seen.insert(l.digest).second) continue;
      ProgressEvent done{.status = "pulling " + l.digest.short_id(),
                         .digest = l.digest.str(),
                         .total = l.size,
                         .completed = l.size};
      if (store_.has_blob(l.digest)) {
        PADDOCK_TRY(emit(done));
        continue;
      }
      PADDOCK_ASSIGN(bool downloaded, download(l));
      if (downloaded) fetched.push_back(l);
      PADDOCK_TRY(emit(done));
    }
    PADDOCK_TRY(emit({.status = "verifying sha256 digest"}));
    for (const Layer& l : fetched) {
      std::string partial = partial_path(l.digest);
      Result<Digest> got = store_.import_blob_file(partial, l.digest);
      ::unlink(partial.c_str());  // verified copy is in place, or the bytes were wrong
      if (!got) return got.status();
    }
    PADDOCK_TRY(emit({.status = "writing manifest"}));
    PADDOCK_TRY(store_.write_manifest(name_, m));
    return emit({.status = "success"});
  }

 private:
  Status emit(const ProgressEvent& e) {
    if (progress_ && !progress_(e)) return cancelled("pull");
    return Status::ok();
  }

  std::string partial_path(const Digest& d) const {
    return store_.root() + std::string(kPartialPrefix) + d.file_name();
  }

  Result<Manifest> fetch_manifest() {
    PADDOCK_ASSIGN(std::string url, manifest_url(name_, opts_.insecure));
    HttpRequest req;
    req.url = url;
    req.headers = {"Accept: " + std::string(kMediaManifest)};
    req.max_body = kMaxManifestBytes;
    PADDOCK_ASSIGN(HttpResponse r, send_with_retry(http_, req, opts_));
    if (r.status == 404) return not_found("pull model manifest: file does not exist");
    if (r.status != 200) return http_error("pull model manifest", r);
    Result<Manifest> m = Manifest::parse(r.body);
    if (!m) return m.status().with_context("pull model manifest: invalid manifest from " + url);
    return m;
  }

  // Downloads the blob into its partial file, continuing what an earlier pull left. Returns
  // false when another puller finished the blob while we waited for the partial's lock.
  Result<bool> download(const Layer& l) {
    std::string path = partial_path(l.digest);
    Fd f(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (f.fd < 0) return io_error(path + ": " + errno_text());
    // One writer per partial file; a concurrent pull of the same blob waits here.
    if (::flock(f.fd, LOCK_EX) != 0) return io_error(path + ": flock: " + errno_text());
    if (store_.has_blob(l.digest)) return false;
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) return io_error(path + ": " + errno_text());
    if (!S_ISREG(st.st_mode)) return io_error(path + ": a partial download must be a regular file");
    uint64_t offset = static_cast<uint64_t>(st.st_size);
    if (offset > l.size) {
      if (::ftruncate(f.fd, 0) != 0) return io_error(path + ": " + errno_text());
      offset = 0;
    }
    PADDOCK_ASSIGN(std::string url, blob_url(name_, l.digest, opts_.insecure));
    const std::string label = "pulling " + l.digest.short_id();
    PADDOCK_TRY(emit({.status = label, .digest = l.digest.str(), .total = l.size, .completed = offset}));

    Status last = Status::ok();
    for (int attempt = 0; offset < l.size;) {
      bool user_cancel = false, oversize = false, first = true;
      Status write_error = Status::ok();
      uint64_t start = offset;
      auto last_emit = std::chrono::steady_clock::now();
      HttpRequest req;
      req.url = url;
      if (offset > 0) req.headers.push_back("Range: bytes=" + std::to_string(offset) + "-");
      req.sink = [&](long status, const char* data, size_t n) {
        if (first) {
          first = false;
          if (status != 206 && offset > 0) {  // the server ignored Range: start over
            if (::ftruncate(f.fd, 0) != 0) {
              write_error = io_error(path + ": " + errno_text());
              return false;
            }
            offset = 0;
          }
        }
        if (offset + n > l.size) {
          oversize = true;
          return false;
        }
        for (size_t done = 0; done < n;) {
          ssize_t w = ::pwrite(f.fd, data + done, n - done, static_cast<off_t>(offset + done));
          if (w < 0) {
            if (errno == EINTR) continue;
            write_error = io_error(path + ": write failed: " + errno_text());
            return false;
          }
          done += static_cast<size_t>(w);
        }
        offset += n;
        auto now = std::chrono::steady_clock::now();
        if (now - last_emit >= kProgressInterval) {
          last_emit = now;
          if (!emit({.status = label, .digest = l.digest.str(), .total = l.size, .completed = offset})) {
            user_cancel = true;
            return false;
          }
        }
        return true;
      };
      Result<HttpResponse> r = http_.send(req);
      if (user_cancel) return cancelled("pull");
      if (!write_error) return write_error;
      if (oversize) {
        ::unlink(path.c_str());  // bytes from a lying server are worthless
        return corrupt("blob " + l.digest.str() + " is larger than the " + std::to_string(l.size) +
                       " bytes the manifest says");
      }
      if (!r && r.status().code() != Code::kUnavailable) return r.status();  // policy, auth: final
      if (r && r->status == 404)
        return not_found("pull model blob " + l.digest.str() + ": file does not exist");
      if (r && r->status == 416) {  // our partial is not a prefix the server accepts: restart
        if (::ftruncate(f.fd, 0) != 0) return io_error(path + ": " + errno_text());
        offset = 0;
      } else if (r && r->status >= 400 && r->status < 500 && r->status != 429) {
        return http_error("pull model blob " + l.digest.str(), *r);
      }
      if (offset >= l.size) break;
      last = r ? http_error("pull model blob " + l.digest.str(), *r) : r.status();
      if (r && r->status < 300)
        last = Status(Code::kUnavailable, "connection closed early while pulling " + l.digest.str());
      // Progress made: the connection was cut, not refused; retrying is free, as on a stall.
      if (offset > start) {
        attempt = 0;
        continue;
      }
      if (attempt >= opts_.max_retries) {
        return Status(Code::kUnavailable, "pull model blob " + l.digest.str() + ": gave up after " +
                                              std::to_string(opts_.max_retries) +
                                              " retries: " + last.message());
      }
      backoff(opts_, attempt++);
      if (opts_.cancelled && opts_.cancelled()) return cancelled("pull");
    }
    if (::fsync(f.fd) != 0) return io_error(path + ": fsync: " + errno_text());
    return true;
  }

  Store& store_;
  const Name& name_;
  const RegistryOptions& opts_;
  const ProgressFn& progress_;
  RegistryHttp http_;
};

class Pusher {
 public:
  Pusher(Store& store, const Name& name, const RegistryOptions& opts, const ProgressFn& progress)
      : store_(store), name_(name), opts_(opts), progress_(progress), http_(http_options(opts)) {}

  Status run() {
    PADDOCK_TRY(emit({.status = "retrieving manifest"}));
    PADDOCK_ASSIGN(Name local, store_.resolve(name_));
    PADDOCK_ASSIGN(Manifest m, store_.read_manifest(local));
    PADDOCK_ASSIGN(std::string raw, read_file(store_.root() + "/manifests/" + local.manifest_path()));
    std::vector<Layer> blobs{m.config};
    blobs.insert(blobs.end(), m.layers.begin(), m.layers.end());
    std::set<Digest> seen;
    for (const Layer& l : blobs) {
      if (!seen.insert(l.digest).second) continue;
      PADDOCK_TRY(upload(l));
    }
    PADDOCK_TRY(emit({.status = "pushing manifest"}));
    PADDOCK_ASSIGN(std::string url, manifest_url(name_, opts_.insecure));
    HttpRequest req;
    req.method = "PUT";
    req.url = url;
    req.headers = {"Content-Type: " + std::string(kMediaManifest)};
    req.body = raw;
    PADDOCK_ASSIGN(HttpResponse r, send_with_retry(http_, req, opts_));
    if (r.status != 201 && r.status != 200) return http_error("push model manifest", r);
    return emit({.status = "success"});
  }

 private:
  Status emit(const ProgressEvent& e) {
    if (progress_ && !progress_(e)) return cancelled("push");
    return Status::ok();
  }

  // The repository a `from` layer came from, when it lives on the same registry.
  std::optional<std::string> mount_source(const Layer& l) const {
    if (l.from.empty()) return std::nullopt;
    Result<Name> from = Name::parse(l.from);
    if (!from || from->host() != name_.host() || from->namespace_model() == name_.namespace_model()) {
      return std::nullopt;
    }
    return from->namespace_model();
  }

  // The absolute upload URL from a 202 answer (Docker-Upload-Location, else Location).
  Result<RedirectDecision> upload_location(const std::string& start, const HttpResponse& r) const {
    std::string loc = r.header("docker-upload-location");
    if (loc.empty()) loc = r.header("location");
    if (loc.empty())
      return invalid_argument("push: registry gave no upload location (status " + std::to_string(r.status) +
                              ")");
    return decide_redirect(start, start, loc, 1, 1, opts_.insecure);
  }

  Status upload(const Layer& l) {
    const std::string label = "pushing " + l.digest.short_id();
    ProgressEvent ev{.status = label, .digest = l.digest.str(), .total = l.size, .completed = 0};
    PADDOCK_TRY(emit(ev));
    ev.completed = l.size;
    PADDOCK_ASSIGN(std::string burl, blob_url(name_, l.digest, opts_.insecure));
    HttpRequest head;
    head.method = "HEAD";
    head.url = burl;
    PADDOCK_ASSIGN(HttpResponse h, send_with_retry(http_, head, opts_));
    if (h.status == 200) return emit(ev);
    if (h.status != 404) return http_error("push: checking blob " + l.digest.str(), h);

    PADDOCK_ASSIGN(std::string start, upload_start_url(name_, opts_.insecure));
    HttpRequest post;
    post.method = "POST";
    post.url = start;
    if (auto src = mount_source(l)) {
      post.url = add_query(add_query(start, "mount", l.digest.str()), "from", *src);
    }
    PADDOCK_ASSIGN(HttpResponse p, send_with_retry(http_, post, opts_));
    if (p.status == 201) return emit(ev);  // mounted from the source repository
    if (p.status != 202) return http_error("push: starting upload of " + l.digest.str(), p);
    PADDOCK_ASSIGN(RedirectDecision loc, upload_location(start, p));

    HttpRequest put;
    put.method = "PUT";
    put.url = add_query(loc.url, "digest", l.digest.str());
    put.send_auth = loc.keep_auth;
    put.headers = {"Content-Type: application/octet-stream"};
    put.upload_path = store_.blob_path(l.digest);
    put.upload_sha256 = l.digest.hex();
    put.upload_size = l.size;
    PADDOCK_ASSIGN(HttpResponse u, send_with_retry(http_, put, opts_));
    if (u.status != 201 && u.status != 204 && u.status != 200) {
      return http_error("push: uploading " + l.digest.str(), u);
    }
    return emit(ev);
  }

  Store& store_;
  const Name& name_;
  const RegistryOptions& opts_;
  const ProgressFn& progress_;
  RegistryHttp http_;
};

}  // namespace

Status pull_model(Store& store, const Name& name, const RegistryOptions& opts, const ProgressFn& progress) {
  return Puller(store, name, opts, progress).run();
}

Status push_model(Store& store, const Name& name, const RegistryOptions& opts, const ProgressFn& progress) {
  return Pusher(store, name, opts, progress).run();
}

}  // namespace paddock::store
