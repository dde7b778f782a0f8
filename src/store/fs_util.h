// Small POSIX file helpers for the store: bounded reads, full writes, fsync of files and
// directories, mtimes. Internal to store/; every error names the path.
//   PADDOCK_ASSIGN(std::string s, read_bounded(path, 1 << 20));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace paddock::store {

// Reads a regular file (not following a final symlink) of at most max_bytes.
Result<std::string> read_bounded(const std::string& path, size_t max_bytes);
Status write_all(int fd, std::string_view bytes, const std::string& path);
Status fsync_dir(const std::string& dir);
Status make_dirs(const std::string& dir);
// Regular-file size and mtime (ns since the epoch); NotFound if absent.
struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};
Result<FileStat> stat_file(const std::string& path);
std::string errno_text(int err);
// A random 16-hex-digit suffix for temp names.
std::string random_suffix();

}  // namespace paddock::store
