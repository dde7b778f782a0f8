// A read-only memory-mapped file. Model weights stay in the mapping (no copy), so the
// kernel can share and evict the pages. Move-only; unmaps on destruction.
//   PADDOCK_ASSIGN(MappedFile f, MappedFile::open(path)); f.bytes();
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"

namespace paddock {

class MappedFile {
 public:
  static Result<MappedFile> open(const std::string& path);
  MappedFile() = default;
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// Reads a whole (small) file into a string: templates, Modelfiles, prompt files.
Result<std::string> read_file(const std::string& path);

}  // namespace paddock
