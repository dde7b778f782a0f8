#include "backend/cpu/repacked_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "backend/cpu/repack.h"

namespace paddock::cpu {

namespace {

// Matrices are repacked in slices of about this many bytes, each slice's source pages
// dropped before the next, so repacking a big matrix never holds two copies of it.
constexpr size_t kSliceBytes = size_t{8} << 20;

uintptr_t page_size() { return static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)); }

// Drops the pages in [begin, end) (page-aligned) from this process; they are clean pages of a
// read-only file mapping, so a later touch (get_rows of a tied embedding) re-reads them.
void release(uintptr_t begin, uintptr_t end) {
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace

void RepackedWeights::adopt(std::span<const uint8_t> bytes, bool release_pages) {
  if (!bytes.empty()) regions_.push_back({bytes.data(), bytes.data() + bytes.size(), release_pages});
}

const uint8_t* RepackedWeights::find_or_build(ThreadPool& pool, const TensorView& w) {
  if (regions_.empty()) return nullptr;
  if (auto it = copies_.find(w.data); it != copies_.end()) return it->second.get();
  const int64_t k = w.ne[0];
  const int64_t m = w.ne[1];
  if (!can_repack(w.type) || m % kRepackRows != 0 || w.ne[2] != 1 || w.ne[3] != 1 ||
      w.nb[1] != dtype_row_bytes(w.type, k)) {
    return nullptr;
  }
  const auto* begin = static_cast<const uint8_t*>(w.data);
  const size_t bytes = repacked_bytes(w.type, k, m);
  const Region* region = nullptr;
  for (const Region& r : regions_) {
    if (begin >= r.begin && bytes <= static_cast<size_t>(r.end - begin)) region = &r;
  }
  if (region == nullptr) return nullptr;
  constexpr size_t kAlign = 64;
  auto* copy = static_cast<uint8_t*>(std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign));
  if (copy == nullptr) return nullptr;  // no room for a copy: the original layout still works
  const int64_t groups = m / kRepackRows;
  const size_t group_bytes = dtype_row_bytes(w.type, k) * kRepackRows;
  const int64_t slice = std::max<int64_t>(1, static_cast<int64_t>(kSliceBytes / group_bytes));
  const uintptr_t page = page_size();
  uintptr_t released =
      (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;  // pages only this matrix uses
  for (int64_t s0 = 0; s0 < groups; s0 += slice) {
    const int64_t s1 = std::min(groups, s0 + slice);
    pool.parallel_for(s1 - s0, [&](int64_t g0, int64_t g1, int) {
      repack_rows(w.type, begin, k, (s0 + g0) * kRepackRows, (s0 + g1) * kRepackRows, copy);
    });
    if (region->release_pages) {
      const uintptr_t done =
          (reinterpret_cast<uintptr_t>(begin) + group_bytes * static_cast<size_t>(s1)) / page * page;
      release(released, done);
      released = std::max(released, done);
    }
  }
  return copies_.emplace(w.data, std::unique_ptr<uint8_t, FreeDeleter>(copy)).first->second.get();
}

}  // namespace paddock::cpu
