#include "backend/buffer.h"

#include <sys/sysinfo.h>

#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include "base/check.h"

namespace paddock {

namespace {

// Idle host allocations, best fit by size. Keeps at most kIdleBytes, but always the most
// recently freed block: one pass's buffer of a large model may exceed the cap alone.
class HostPool {
 public:
  static constexpr size_t kIdleBytes = size_t{128} << 20;

  std::unique_ptr<uint8_t[]> take(size_t n, size_t* capacity) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = idle_.lower_bound(n);
      if (it != idle_.end()) {
        *capacity = it->first;
        std::unique_ptr<uint8_t[]> p = std::move(it->second);
        idle_bytes_ -= it->first;
        idle_.erase(it);
        return p;
      }
    }
    *capacity = n;
    return std::unique_ptr<uint8_t[]>(new uint8_t[n == 0 ? 1 : n]);
  }

  void give(std::unique_ptr<uint8_t[]> p, size_t capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    // Over the cap, the largest other idle blocks go first (they are the rarest to fit again).
    while (idle_bytes_ + capacity > kIdleBytes && !idle_.empty()) {
      auto last = std::prev(idle_.end());
      idle_bytes_ -= last->first;
      idle_.erase(last);
    }
    idle_bytes_ += capacity;
    idle_.emplace(capacity, std::move(p));
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, std::unique_ptr<uint8_t[]>> idle_;
  size_t idle_bytes_ = 0;
};

HostPool& pool() {
  static HostPool* p = new HostPool();  // never destroyed: passes may end during exit
  return *p;
}

class HostBuffer : public Buffer {
 public:
  HostBuffer(Device& device, uint8_t* data, size_t size) : device_(device), data_(data), size_(size) {}

  Device& device() const override { return device_; }
  size_t size() const override { return size_; }
  uint8_t* host() const override { return data_; }
  void set(size_t offset, std::span<const uint8_t> bytes) override {
    check_range(offset, bytes.size());
    if (!bytes.empty()) std::memcpy(data_ + offset, bytes.data(), bytes.size());
  }
  void get(size_t offset, std::span<uint8_t> bytes) const override {
    check_range(offset, bytes.size());
    if (!bytes.empty()) std::memcpy(bytes.data(), data_ + offset, bytes.size());
  }
  void copy_from(const Buffer& src, size_t src_offset, size_t offset, size_t n) override {
    check_range(offset, n);
    PADDOCK_CHECK(src.host() != nullptr && src_offset <= src.size() && n <= src.size() - src_offset);
    if (n != 0) std::memmove(data_ + offset, src.host() + src_offset, n);
  }
  void clear() override {
    if (size_ != 0) std::memset(data_, 0, size_);
  }

 private:
  void check_range(size_t offset, size_t n) const { PADDOCK_CHECK(offset <= size_ && n <= size_ - offset); }

  Device& device_;
  uint8_t* data_;
  size_t size_;
};

class PooledHostBuffer final : public HostBuffer {
 public:
  PooledHostBuffer(Device& device, std::unique_ptr<uint8_t[]> p, size_t capacity, size_t size)
      : HostBuffer(device, p.get(), size), mem_(std::move(p)), capacity_(capacity) {}
  ~PooledHostBuffer() override { pool().give(std::move(mem_), capacity_); }

 private:
  std::unique_ptr<uint8_t[]> mem_;
  size_t capacity_;
};

// MemAvailable from /proc/meminfo: what the kernel can hand out without swapping.
uint64_t available_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

class HostDevice final : public Device {
 public:
  std::string_view name() const override { return "host"; }
  DeviceKind kind() const override { return DeviceKind::kHost; }
  DeviceMemory memory() const override {
    struct sysinfo si {};
    const uint64_t total = sysinfo(&si) == 0 ? uint64_t{si.totalram} * si.mem_unit : 0;
    return DeviceMemory{.total = total, .free = available_memory()};
  }
  Result<std::unique_ptr<Buffer>> alloc(size_t bytes) override {
    size_t capacity = 0;
    std::unique_ptr<uint8_t[]> p = pool().take(bytes, &capacity);
    return std::unique_ptr<Buffer>(std::make_unique<PooledHostBuffer>(*this, std::move(p), capacity, bytes));
  }
};

class WrappedHostBuffer final : public HostBuffer {
 public:
  using HostBuffer::HostBuffer;
  void set(size_t, std::span<const uint8_t>) override { PADDOCK_CHECK_MSG(false, "weights are read-only"); }
  void copy_from(const Buffer&, size_t, size_t, size_t) override {
    PADDOCK_CHECK_MSG(false, "weights are read-only");
  }
  void clear() override { PADDOCK_CHECK_MSG(false, "weights are read-only"); }
};

}  // namespace

Device& host_device() {
  static HostDevice* d = new HostDevice();  // never destroyed, like the pool
  return *d;
}

std::unique_ptr<Buffer> wrap_host_memory(std::span<const uint8_t> bytes) {
  return std::make_unique<WrappedHostBuffer>(host_device(), const_cast<uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace paddock
