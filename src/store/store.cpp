#include "store/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "base/env.h"
#include "base/log.h"
#include "base/sha256.h"
#include "store/fs_util.h"
#include "store/go_json.h"
#include "store/modelfile.h"

namespace paddock::store {
namespace {

constexpr std::string_view kTempPrefix = ".paddock-tmp-";
constexpr size_t kMaxTextLayer = 64 << 20;  // template/system/license/params/messages
constexpr size_t kCopyChunk = 1 << 20;

// Entries of a directory that could be store parts: no dot files, no "." / "..".
std::vector<std::string> list_dir(const std::string& dir, bool want_dirs) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.empty() || n[0] == '.') continue;
    struct stat st {};
    if (::lstat((dir + "/" + n).c_str(), &st) != 0) continue;
    if (want_dirs ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool remove_dir_if_empty(const std::string& dir) { return ::rmdir(dir.c_str()) == 0; }

// Reads a text layer and checks its size and hash against the manifest.
Result<std::string> read_verified(const Store& s, const Layer& l) {
  if (l.size > kMaxTextLayer)
    return corrupt("layer " + l.digest.str() + " (" + l.media_type + "): " + std::to_string(l.size) +
                   " bytes, at most " + std::to_string(kMaxTextLayer) + " expected");
  auto data = read_bounded(s.blob_path(l.digest), kMaxTextLayer);
  if (!data) return data.status().with_context("blob " + l.digest.str());
  if (data->size() != l.size)
    return corrupt("blob " + l.digest.str() + ": manifest says " + std::to_string(l.size) + " bytes, found " +
                   std::to_string(data->size()));
  const std::string got = sha256_hex(*data);
  if (got != l.digest.hex())
    return corrupt("blob " + l.digest.str() + ": content hashes to sha256:" + got +
                   ", not the digest it is stored under");
  return data;
}

}  // namespace

Store::Lock& Store::Lock::operator=(Lock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Store::Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

Result<Store> Store::open(const std::string& root) {
  if (root.empty()) return invalid_argument("model store: empty root path");
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  PADDOCK_TRY(make_dirs(r + "/manifests"));
  PADDOCK_TRY(make_dirs(r + "/blobs"));
  return Store(r);
}

std::string Store::default_root() {
  if (auto v = env_get("MODELS"); v && !v->empty()) return *v;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.paddock/models";
}

std::string Store::blob_path(const Digest& d) const { return root_ + "/blobs/" + d.file_name(); }

bool Store::has_blob(const Digest& d) const { return stat_file(blob_path(d)).ok(); }

std::string Store::manifest_file(const Name& name) const {
  return root_ + "/manifests/" + name.manifest_path();
}

std::string Store::temp_path() const {
  return root_ + "/blobs/" + std::string(kTempPrefix) + std::to_string(::getpid()) + "-" + random_suffix();
}

Result<Store::Lock> Store::lock(bool exclusive) const {
  const std::string path = root_ + "/.paddock-lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(path + ": " + errno_text(errno));
  while (::flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    ::close(fd);
    return io_error(path + ": flock failed: " + errno_text(e));
  }
  return Lock(fd);
}

Store::Scan Store::scan() const {
  Scan out;
  const std::string base = root_ + "/manifests";
  for (const auto& host : list_dir(base, true))
    for (const auto& ns : list_dir(base + "/" + host, true))
      for (const auto& model : list_dir(base + "/" + host + "/" + ns, true))
        for (const auto& tag : list_dir(base + "/" + host + "/" + ns + "/" + model, false)) {
          const std::string rel = host + "/" + ns + "/" + model + "/" + tag;
          auto name = Name::from_manifest_path(rel);
          if (!name) {
            log_warn("skipping manifest " + rel + ": " + name.status().message());
            out.all_ok = false;
            continue;
          }
          auto bytes = read_bounded(base + "/" + rel, kMaxManifestBytes);
          auto m = bytes ? Manifest::parse(*bytes) : Result<Manifest>(bytes.status());
          if (!m) {
            log_warn("skipping manifest " + rel + ": " + m.status().message());
            out.all_ok = false;
            continue;
          }
          out.manifests.emplace_back(std::move(name).value(), std::move(m).value());
        }
  return out;
}

Result<std::vector<ModelSummary>> Store::list() const {
  std::vector<ModelSummary> out;
  for (auto& [name, m] : scan().manifests) {
    const std::string path = manifest_file(name);
    auto bytes = read_bounded(path, kMaxManifestBytes);
    auto st = stat_file(path);
    if (!bytes || !st) continue;  // removed while we looked
    ModelSummary s{name, sha256_hex(*bytes), m.total_size(), st->mtime_ns, {}};
    if (auto cfg = read_verified(*this, m.config); cfg) {
      if (auto c = ModelConfig::parse(*cfg); c) s.config = std::move(c).value();
    }
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const ModelSummary& a, const ModelSummary& b) {
    return a.modified_unix_ns > b.modified_unix_ns;
  });
  return out;
}

Result<Name> Store::resolve(const Name& name) const {
  if (stat_file(manifest_file(name)).ok()) return name;
  for (const auto& [n, m] : scan().manifests)
    if (n.equal_fold(name)) return n;
  return not_found("model '" + name.display_shortest() + "' not found");
}

Result<Manifest> Store::read_manifest(const Name& name) const {
  PADDOCK_ASSIGN(Name n, resolve(name));
  PADDOCK_ASSIGN(std::string bytes, read_bounded(manifest_file(n), kMaxManifestBytes));
  if (name.digest() && sha256_hex(bytes) != name.digest()->hex())
    return not_found("model '" + name.display_shortest() + "' has no manifest with digest " +
                     name.digest()->str());
  auto m = Manifest::parse(bytes);
  if (!m) return m.status().with_context("model '" + n.display_shortest() + "'");
  return m;
}

Result<ModelInfo> Store::show(const Name& name) const {
  PADDOCK_ASSIGN(Name n, resolve(name));
  const std::string path = manifest_file(n);
  PADDOCK_ASSIGN(std::string bytes, read_bounded(path, kMaxManifestBytes));
  PADDOCK_ASSIGN(FileStat st, stat_file(path));
  auto parsed = Manifest::parse(bytes);
  if (!parsed) return parsed.status().with_context("model '" + n.display_shortest() + "'");
  ModelInfo info;
  info.name = n;
  info.manifest = std::move(parsed).value();
  info.digest = sha256_hex(bytes);
  info.modified_unix_ns = st.mtime_ns;
  PADDOCK_ASSIGN(std::string cfg, read_verified(*this, info.manifest.config));
  PADDOCK_ASSIGN(info.config, ModelConfig::parse(cfg));
  for (const Layer& l : info.manifest.layers) {
    const std::string_view t = l.media_type;
    if (t == kMediaModel || t == kMediaAdapter || t == kMediaProjector) {
      auto bs = stat_file(blob_path(l.digest));
      if (!bs)
        return bs.status().with_context("model '" + n.display_shortest() + "': layer " + l.digest.str());
      if (bs->size != l.size)
        return corrupt("model '" + n.display_shortest() + "': blob " + l.digest.str() + " has " +
                       std::to_string(bs->size) + " bytes, the manifest says " + std::to_string(l.size));
      if (t == kMediaModel) {
        info.model_path = blob_path(l.digest);
        info.parent_model = l.from;
      } else {
        (t == kMediaAdapter ? info.adapter_paths : info.projector_paths).push_back(blob_path(l.digest));
      }
    } else if (t == kMediaTemplate || t == kMediaPrompt || t == kMediaSystem || t == kMediaLicense ||
               t == kMediaParams || t == kMediaMessages) {
      PADDOCK_ASSIGN(std::string text, read_verified(*this, l));
      if (t == kMediaTemplate || t == kMediaPrompt) {
        info.template_text = std::move(text);
      } else if (t == kMediaSystem) {
        info.system = std::move(text);
      } else if (t == kMediaLicense) {
        info.licenses.push_back(std::move(text));
      } else if (t == kMediaParams) {
        PADDOCK_ASSIGN(info.params, Params::from_json(text));
      } else {
        PADDOCK_ASSIGN(info.messages, messages_from_json(text));
      }
    }
  }
  return info;
}

Status Store::verify(const Name& name) const {
  PADDOCK_ASSIGN(Manifest m, read_manifest(name));
  std::vector<Layer> all{m.config};
  all.insert(all.end(), m.layers.begin(), m.layers.end());
  for (const Layer& l : all) {
    const std::string p = blob_path(l.digest);
    PADDOCK_ASSIGN(FileStat st, stat_file(p));
    if (st.size != l.size)
      return corrupt("blob " + l.digest.str() + ": " + std::to_string(st.size) +
                     " bytes, the manifest says " + std::to_string(l.size));
    PADDOCK_ASSIGN(std::string hex, sha256_file_hex(p));
    if (hex != l.digest.hex()) return corrupt("blob " + l.digest.str() + ": content hashes to sha256:" + hex);
  }
  return Status::ok();
}

Status Store::write_file_atomic(const std::string& dest, std::string_view bytes,
                                std::string_view hook_prefix) {
  const std::string tmp = temp_path();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(tmp + ": " + errno_text(errno));
  Status st = write_all(fd, bytes, tmp);
  if (st && ::fsync(fd) != 0) st = io_error(tmp + ": fsync failed: " + errno_text(errno));
  ::close(fd);
  if (!st) {
    ::unlink(tmp.c_str());
    return st;
  }
  fault(std::string(hook_prefix) + ".temp_written");
  const std::string dir = dest.substr(0, dest.rfind('/'));
  if (Status d = make_dirs(dir); !d) {
    ::unlink(tmp.c_str());
    return d;
  }
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return io_error(dest + ": rename failed: " + errno_text(e));
  }
  fault(std::string(hook_prefix) + ".renamed");
  return fsync_dir(dir);
}

Status Store::write_manifest(const Name& name, const Manifest& m) {
  PADDOCK_ASSIGN(Lock held, lock(false));
  for (const Layer& l : [&] {
         std::vector<Layer> all{m.config};
         all.insert(all.end(), m.layers.begin(), m.layers.end());
         return all;
       }()) {
    auto st = stat_file(blob_path(l.digest));
    if (!st)
      return not_found("cannot write manifest for '" + name.display_shortest() + "': blob " + l.digest.str() +
                       " is missing");
    if (st->size != l.size)
      return corrupt("cannot write manifest for '" + name.display_shortest() + "': blob " + l.digest.str() +
                     " has " + std::to_string(st->size) + " bytes, the layer says " + std::to_string(l.size));
  }
  return write_file_atomic(manifest_file(name), m.to_json(), "manifest");
}

Result<Digest> Store::import_blob(const ReadFn& read, const std::optional<Digest>& expected) {
  PADDOCK_ASSIGN(Lock held, lock(false));
  const std::string tmp = temp_path();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(tmp + ": " + errno_text(errno));
  const auto fail = [&](Status s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  Sha256 h;
  std::string buf(kCopyChunk, '\0');
  uint64_t total = 0;
  for (;;) {
    auto n = read(buf.data(), buf.size());
    if (!n) return fail(n.status());
    if (*n == 0) break;
    if (*n > buf.size())
      return fail(internal_error("blob import: reader returned more bytes than asked for"));
    total += *n;
    if (total > kMaxBlobSize)
      return fail(invalid_argument("blob import: more than " + std::to_string(kMaxBlobSize) + " bytes"));
    h.update(buf.data(), *n);
    if (Status w = write_all(fd, std::string_view(buf.data(), *n), tmp); !w) return fail(w);
  }
  if (::fsync(fd) != 0) return fail(io_error(tmp + ": fsync failed: " + errno_text(errno)));
  ::close(fd);
  auto got = Digest::from_hex(h.hex_digest());
  if (!got) {
    ::unlink(tmp.c_str());
    return got.status();
  }
  if (expected && *expected != *got) {
    ::unlink(tmp.c_str());
    return invalid_argument("digest mismatch, expected \"" + expected->str() + "\", got \"" + got->str() +
                            "\"");
  }
  fault("blob.temp_written");
  const std::string dest = blob_path(*got);
  if (has_blob(*got)) {
    ::unlink(tmp.c_str());
    ::utimensat(AT_FDCWD, dest.c_str(), nullptr, 0);  // fresh mtime: prune's grace period starts again
    return got;
  }
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return io_error(dest + ": rename failed: " + errno_text(e));
  }
  fault("blob.renamed");
  PADDOCK_TRY(fsync_dir(root_ + "/blobs"));
  return got;
}

Result<Digest> Store::import_blob_file(const std::string& path, const std::optional<Digest>& expected) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path + ": " + errno_text(errno));
  auto r = import_blob(
      [&](char* buf, size_t n) -> Result<size_t> {
        for (;;) {
          const ssize_t got = ::read(fd, buf, n);
          if (got < 0 && errno == EINTR) continue;
          if (got < 0) return io_error(path + ": read failed: " + errno_text(errno));
          return static_cast<size_t>(got);
        }
      },
      expected);
  ::close(fd);
  return r;
}

Result<Digest> Store::import_blob_bytes(std::string_view bytes) {
  size_t off = 0;
  return import_blob([&](char* buf, size_t n) -> Result<size_t> {
    const size_t k = std::min(n, bytes.size() - off);
    std::copy_n(bytes.data() + off, k, buf);
    off += k;
    return k;
  });
}

Status Store::copy(const Name& src, const Name& dst) {
  PADDOCK_ASSIGN(Name from, resolve(src));
  PADDOCK_ASSIGN(std::string bytes, read_bounded(manifest_file(from), kMaxManifestBytes));
  auto m = Manifest::parse(bytes);
  if (!m) return m.status().with_context("model '" + from.display_shortest() + "'");
  auto existing = resolve(dst);
  const Name to = existing ? existing.value() : dst;
  PADDOCK_ASSIGN(Lock held, lock(false));
  for (const Digest& d : m->digests())
    if (!has_blob(d))
      return not_found("model '" + from.display_shortest() + "': blob " + d.str() + " is missing");
  // Ollama copies the manifest file as it is (same bytes, same ID).
  return write_file_atomic(manifest_file(to), bytes, "manifest");
}

Status Store::remove_unreferenced(const std::vector<Digest>& candidates) {
  PADDOCK_ASSIGN(Lock held, lock(true));
  const Scan s = scan();
  if (!s.all_ok) {
    log_warn("keeping blobs: some manifest could not be read, so its references are unknown");
    return Status::ok();
  }
  std::set<Digest> used;
  for (const auto& [n, m] : s.manifests)
    for (const Digest& d : m.digests()) used.insert(d);
  for (const Digest& d : candidates)
    if (!used.count(d) && ::unlink(blob_path(d).c_str()) != 0 && errno != ENOENT)
      return io_error(blob_path(d) + ": " + errno_text(errno));
  return Status::ok();
}

Status Store::remove(const Name& name) {
  std::vector<Digest> candidates;
  {
    PADDOCK_ASSIGN(Lock held, lock(true));
    PADDOCK_ASSIGN(Name n, resolve(name));
    const std::string path = manifest_file(n);
    if (auto bytes = read_bounded(path, kMaxManifestBytes); bytes) {
      if (auto m = Manifest::parse(*bytes); m) candidates = m->digests();
    }
    if (::unlink(path.c_str()) != 0) return io_error(path + ": " + errno_text(errno));
    // Prune now-empty tag, model and namespace directories (never manifests/ itself).
    std::string dir = path.substr(0, path.rfind('/'));
    for (int i = 0; i < 3 && remove_dir_if_empty(dir); ++i) dir = dir.substr(0, dir.rfind('/'));
  }
  return remove_unreferenced(candidates);
}

Result<Store::PruneReport> Store::prune(std::chrono::seconds grace) {
  PADDOCK_ASSIGN(Lock held, lock(true));
  const Scan s = scan();
  if (!s.all_ok)
    return corrupt("prune refused: a manifest could not be read, so its blobs would look unused");
  std::set<std::string> used;
  for (const auto& [n, m] : s.manifests)
    for (const Digest& d : m.digests()) used.insert(d.file_name());
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const int64_t grace_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(grace).count();
  PruneReport report;
  const std::string blobs = root_ + "/blobs";
  DIR* d = ::opendir(blobs.c_str());
  if (!d) return io_error(blobs + ": " + errno_text(errno));
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  for (const std::string& n : names) {
    const bool temp = n.rfind(kTempPrefix, 0) == 0;
    const bool blob = n.size() == 71 && Digest::is_valid(n);
    if (!temp && !(blob && !used.count(n))) continue;
    auto st = stat_file(blobs + "/" + n);
    if (!st || now_ns - st->mtime_ns < grace_ns) continue;
    if (::unlink((blobs + "/" + n).c_str()) == 0) ++(temp ? report.temp_files_removed : report.blobs_removed);
  }
  const std::string base = root_ + "/manifests";
  for (const auto& host : list_dir(base, true)) {
    for (const auto& ns : list_dir(base + "/" + host, true)) {
      for (const auto& model : list_dir(base + "/" + host + "/" + ns, true))
        remove_dir_if_empty(base + "/" + host + "/" + ns + "/" + model);
      remove_dir_if_empty(base + "/" + host + "/" + ns);
    }
    remove_dir_if_empty(base + "/" + host);
  }
  return report;
}

std::string render_modelfile(const ModelInfo& m, std::string_view program) {
  std::string out = "# Modelfile generated by \"" + std::string(program) + " show\"\n";
  out += "# To build a new Modelfile based on this, replace FROM with:\n";
  out += "# FROM " + m.name.display_shortest() + "\n\n";
  const auto quote = [](const std::string& v) { return quote_modelfile_value(v); };
  out += "FROM " + m.model_path + "\n";
  for (const auto& a : m.adapter_paths) out += "ADAPTER " + quote(a) + "\n";
  for (const auto& p : m.projector_paths) out += "FROM " + p + "\n";
  if (m.template_text) out += "TEMPLATE " + quote(*m.template_text) + "\n";
  if (!m.system.empty()) out += "SYSTEM " + quote(m.system) + "\n";
  if (!m.config.renderer.empty()) out += "RENDERER " + quote(m.config.renderer) + "\n";
  if (!m.config.parser.empty()) out += "PARSER " + quote(m.config.parser) + "\n";
  for (const auto& [k, v] : m.params.as_text()) out += "PARAMETER " + k + " " + quote(v) + "\n";
  for (const auto& l : m.licenses) out += "LICENSE " + quote(l) + "\n";
  for (const auto& msg : m.messages) out += "MESSAGE " + msg.role + " " + quote(msg.content) + "\n";
  return out;
}

std::string render_parameters(const Params& p) {
  std::string out;
  for (const auto& [k, v] : p.as_text()) {
    if (!out.empty()) out += '\n';
    std::string key = k;
    if (key.size() < 30) key.append(30 - key.size(), ' ');
    const auto it = p.values().find(k);
    const bool is_string = std::holds_alternative<std::string>(it->second) ||
                           std::holds_alternative<std::vector<std::string>>(it->second);
    out += key + " " + (is_string ? go_quote(v) : v);
  }
  return out;
}

}  // namespace paddock::store
