// The machine's memory read bandwidth, measured the way decode reads weights: n threads sum
// disjoint parts of a buffer far larger than the caches with the widest vector loads the CPU
// has. Decode efficiency = tokens/s x bytes read per token / this number.
// Invariant: the buffer (>= 1 GiB) is touched before timing, so page faults are not measured.
//   double gbs = measure_read_bandwidth_gbs(2);  // best of 5 passes, in GB/s (1e9 bytes)
#pragma once

#include <cstddef>

namespace paddock {

inline constexpr size_t kBandwidthProbeBytes = size_t{1} << 30;

// bytes < 1 MiB is raised to 1 MiB; passes < 1 to 1. Returns the best pass.
double measure_read_bandwidth_gbs(int n_threads, size_t bytes = kBandwidthProbeBytes, int passes = 5);

}  // namespace paddock
