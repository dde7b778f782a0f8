// How many threads compute kernels use by default: one per physical core the process may run
// on, as llama.cpp and Ollama choose. A core's second hardware thread shares its vector units
// and its path to memory, so it adds little to decode and costs synchronisation; threads
// beyond the CPUs the process may use (its affinity mask, a cgroup's CPU quota, as a
// container limited with --cpus has) only wait for one another.
//   ThreadPool pool(default_thread_count());
#pragma once

#include <string>
#include <vector>

namespace paddock {

// Read once from the running system; at least 1.
int default_thread_count();

// The same from a file tree under `root` ("" for the real one): the cores of the CPUs in
// `allowed` (root/sys/devices/system/cpu/cpuN/topology/{physical_package_id,core_id}; a CPU
// without them counts as a core of its own), capped by the cgroup quota rounded up
// (root/proc/self/cgroup, then v2 cpu.max or v1 cpu.cfs_quota_us / cpu.cfs_period_us under
// root/sys/fs/cgroup). At least 1.
int default_thread_count(const std::string& root, const std::vector<int>& allowed);

}  // namespace paddock
