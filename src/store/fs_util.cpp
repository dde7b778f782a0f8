#include "store/fs_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace paddock::store {

std::string errno_text(int err) { return std::strerror(err); }

Result<std::string> read_bounded(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return not_found(path + ": file does not exist");
    return io_error(path + ": " + errno_text(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return corrupt(path + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return corrupt(path + ": " + std::to_string(st.st_size) + " bytes, at most " + std::to_string(max_bytes) +
                   " expected");
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

Status write_all(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(path + ": write failed: " + errno_text(errno));
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

Status fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(dir + ": " + errno_text(errno));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return io_error(dir + ": fsync failed: " + errno_text(errno));
  return Status::ok();
}

Status make_dirs(const std::string& dir) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    cur = dir.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return io_error(cur + ": " + errno_text(errno));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return io_error(dir + ": not a directory");
  return Status::ok();
}

Result<FileStat> stat_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return not_found(path + ": file does not exist");
    return io_error(path + ": " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) return corrupt(path + ": not a regular file");
  return FileStat{static_cast<uint64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::string random_suffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 20));
  static constexpr char kHex[] = "0123456789abcdef";
  uint64_t v = rng();
  std::string out;
  for (int i = 0; i < 16; ++i, v >>= 4) out += kHex[v & 0xF];
  return out;
}

}  // namespace paddock::store
