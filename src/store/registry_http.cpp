#include "store/registry_http.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "store/registry_url.h"

namespace paddock::store {
namespace {

constexpr size_t kErrorBodyCap = 64 << 10;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const HttpRequest* req = nullptr;
  const std::function<bool()>* cancel = nullptr;
  CURL* curl = nullptr;
  HttpResponse resp;
  bool cancelled = false;
  bool too_large = false;
  // Upload source.
  FILE* file = nullptr;
  std::string_view body;
  size_t body_pos = 0;
  // A file upload's hash so far, checked when its last byte has been read.
  Sha256 hash;
  uint64_t read = 0;
  bool mismatch = false;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    t->resp.headers.clear();  // a new response (after 100 Continue or a redirect)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string key(line.substr(0, colon));
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view v = line.substr(colon + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  t->resp.headers[key] = std::string(v);
  return size * n;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  bool success = status >= 200 && status < 300;
  if (success && t->req->sink) {
    if (!t->req->sink(status, data, len)) {
      t->cancelled = true;
      return 0;
    }
    return len;
  }
  size_t cap = success ? t->req->max_body : kErrorBodyCap;
  if (t->resp.body.size() + len > cap) {
    if (success) {
      t->too_large = true;
      return 0;
    }
    len = cap - t->resp.body.size();  // keep the start of an error page, drop the rest
    t->resp.body.append(data, len);
    return size * n;
  }
  t->resp.body.append(data, len);
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (!(*t->cancel)()) return 0;
  t->cancelled = true;
  return 1;
}

size_t on_read(char* buf, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t want = size * n;
  if (t->file) {
    size_t got = std::fread(buf, 1, want, t->file);
    if (got == 0 && std::ferror(t->file)) return CURL_READFUNC_ABORT;
    const HttpRequest& req = *t->req;
    if (req.upload_sha256.empty()) return got;
    t->hash.update(std::string_view(buf, got));
    t->read += got;
    // The last bytes are held back from the registry unless the whole file hashes right.
    if (t->read == req.upload_size && t->hash.hex_digest() != req.upload_sha256) {
      t->mismatch = true;
      return CURL_READFUNC_ABORT;
    }
    return got;
  }
  size_t got = std::min(want, t->body.size() - t->body_pos);
  std::copy_n(t->body.data() + t->body_pos, got, buf);
  t->body_pos += got;
  return got;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

bool is_redirect(long s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

}  // namespace

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

RegistryHttp::RegistryHttp(HttpOptions opts) : opts_(std::move(opts)) { global_init(); }

Result<HttpResponse> RegistryHttp::send_once(const HttpRequest& req, const std::string& url, bool with_auth) {
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return internal_error("curl_easy_init failed");
  Transfer t;
  t.req = &req;
  t.curl = curl.get();
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, opts_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, opts_.connect_timeout_s);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, opts_.stall_timeout_s);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  if (opts_.cancelled) {
    t.cancel = &opts_.cancelled;
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  }

  curl_slist* raw = nullptr;
  for (const auto& h : req.headers) raw = curl_slist_append(raw, h.c_str());
  raw = curl_slist_append(raw, "Expect:");
  std::string auth = "Authorization: Bearer " + token_;
  if (with_auth && !token_.empty()) raw = curl_slist_append(raw, auth.c_str());
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());

  std::unique_ptr<FILE, FileCloser> file;
  if (req.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (req.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (req.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(c, CURLOPT_READDATA, &t);
    if (!req.upload_path.empty()) {
      // Never through a link (a blob swapped for a link to /etc/passwd must not leave).
      const int fd = ::open(req.upload_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return io_error(req.upload_path + ": cannot open for upload (a link or missing)");
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return io_error(req.upload_path + ": not a regular file; not uploaded");
      }
      const auto size = static_cast<uint64_t>(st.st_size);
      if (!req.upload_sha256.empty() && size != req.upload_size) {
        ::close(fd);
        return corrupt(req.upload_path + ": holds " + std::to_string(size) + " bytes, the manifest says " +
                       std::to_string(req.upload_size) + "; not uploaded");
      }
      file.reset(::fdopen(fd, "rb"));
      if (!file) {
        ::close(fd);
        return io_error(req.upload_path + ": cannot open for upload");
      }
      t.file = file.get();
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(size));
    } else {
      t.body = req.body;
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    }
  } else if (req.method != "GET") {
    return invalid_argument("unsupported HTTP method " + req.method);
  }

  CURLcode rc = curl_easy_perform(c);
  if (t.cancelled) return Status(Code::kCancelled, "cancelled");
  if (t.mismatch) {
    return corrupt(req.upload_path + ": its bytes do not match digest sha256:" + req.upload_sha256 +
                   "; not uploaded");
  }
  if (t.too_large) return corrupt(url + ": response larger than " + std::to_string(req.max_body) + " bytes");
  if (rc != CURLE_OK) {
    // A name that does not resolve, a host that refuses or does not answer the connection:
    // a retry seconds later would fare no better, so fail at once (offline, wrong port).
    // Transfers cut after connecting are retried.
    curl_off_t connected_us = 0;
    curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected_us);
    const bool never_connected = rc == CURLE_COULDNT_CONNECT || (rc == CURLE_OPERATION_TIMEDOUT && connected_us == 0);
    const Code code = rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY ||
                              rc == CURLE_UNSUPPORTED_PROTOCOL || never_connected
                          ? Code::kIo
                          : Code::kUnavailable;
    return Status(code, req.method + " " + url + ": " + curl_easy_strerror(rc));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.resp.status);
  t.resp.url = url;
  return std::move(t.resp);
}

Status RegistryHttp::fetch_token(const std::string& challenge, const std::string& registry_url) {
  PADDOCK_ASSIGN(BearerChallenge ch, parse_www_authenticate(challenge));
  PADDOCK_ASSIGN(std::string url, token_url(ch, registry_url));
  HttpRequest req;
  req.url = url;
  req.max_body = 1 << 20;
  PADDOCK_ASSIGN(HttpResponse r, send_once(req, url, false));
  if (r.status != 200) {
    return Status(Code::kInvalidArgument, "registry authentication failed: token request returned " +
                                              std::to_string(r.status) + ": " + r.body);
  }
  try {
    auto j = nlohmann::json::parse(r.body);
    std::string tok;
    if (j.contains("token") && j["token"].is_string()) tok = j["token"].get<std::string>();
    if (tok.empty() && j.contains("access_token") && j["access_token"].is_string()) {
      tok = j["access_token"].get<std::string>();
    }
    if (tok.empty())
      return invalid_argument("registry authentication failed: token response has no \"token\"");
    token_ = tok;
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument(std::string("registry authentication failed: token response is not JSON: ") +
                            e.what());
  }
  return Status::ok();
}

Result<HttpResponse> RegistryHttp::send(const HttpRequest& req) {
  std::string url = req.url;
  HttpRequest cur = req;
  bool auth = req.send_auth;
  bool token_tried = false;
  int hops = 0;
  for (;;) {
    PADDOCK_ASSIGN(HttpResponse r, send_once(cur, url, auth));
    if (req.follow_redirects && is_redirect(r.status)) {
      ++hops;
      PADDOCK_ASSIGN(RedirectDecision d, decide_redirect(req.url, url, r.header("location"), hops,
                                                         opts_.max_redirects, opts_.insecure));
      auth = auth && d.keep_auth;
      url = d.url;
      if (r.status == 303) {
        cur.method = "GET";
        cur.body.clear();
        cur.upload_path.clear();
      }
      continue;
    }
    if (r.status == 401 && !token_tried && auth && !r.header("www-authenticate").empty()) {
      token_tried = true;
      PADDOCK_TRY(fetch_token(r.header("www-authenticate"), url));
      continue;  // same URL, now with the token
    }
    return r;
  }
}

}  // namespace paddock::store
