// Devices and buffers: where tensors live. A Device says what it is (the host, or an
// accelerator), how much memory it has, and makes Buffers; a Buffer is memory on one device
// with explicit byte transfers. Code above the backends (model/, kv/, engine/) moves bytes
// only through set/get/copy_from, never through host(), so the same code serves a buffer a
// GPU owns.
// Invariants: offsets and sizes are checked (PADDOCK_CHECK: callers compute them from
// validated shapes). host() is non-null exactly for host-visible memory; only kernels of
// host backends use it.
//   PADDOCK_ASSIGN(std::unique_ptr<Buffer> b, host_device().alloc(bytes));
//   b->set(0, data); b->get(0, out);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "base/status.h"

namespace paddock {

class Device;

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual Device& device() const = 0;
  virtual size_t size() const = 0;
  // Byte 0 of host-visible memory, or nullptr (device memory the host cannot address).
  virtual uint8_t* host() const = 0;
  virtual void set(size_t offset, std::span<const uint8_t> bytes) = 0;
  virtual void get(size_t offset, std::span<uint8_t> bytes) const = 0;
  // n bytes from src (which may be this buffer; the ranges may overlap) to this buffer.
  virtual void copy_from(const Buffer& src, size_t src_offset, size_t offset, size_t n) = 0;
  virtual void clear() = 0;  // every byte 0
  // The buffer that holds the bytes: this one, or the one a proxy (a graph's compute buffer)
  // forwards to. Device backends bind that one.
  virtual const Buffer& storage() const { return *this; }
};

enum class DeviceKind : uint8_t { kHost, kAccelerator };

struct DeviceMemory {
  uint64_t total = 0;
  uint64_t free = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string_view name() const = 0;
  virtual DeviceKind kind() const = 0;
  virtual DeviceMemory memory() const = 0;
  // A buffer of `bytes` (contents undefined); kResourceExhausted when it does not fit.
  virtual Result<std::unique_ptr<Buffer>> alloc(size_t bytes) = 0;
};

// The process's host memory. Its buffers come from a pool of recently freed ones (best fit),
// because a forward pass's tens of MB, freshly allocated, cost page faults and the kernel's
// zeroing of every page (about a tenth of pp512 time before the pool).
Device& host_device();

// A host buffer over memory it does not own (a model file's mapping): set and clear are
// caller bugs there, since weights are read-only.
std::unique_ptr<Buffer> wrap_host_memory(std::span<const uint8_t> bytes);

}  // namespace paddock
