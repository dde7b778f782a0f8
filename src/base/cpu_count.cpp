#include "base/cpu_count.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace paddock {

namespace {

std::optional<std::string> read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<long long> read_number(const std::string& path) {
  const std::optional<std::string> line = read_first_line(path);
  if (!line) return std::nullopt;
  try {
    size_t used = 0;
    const long long v = std::stoll(*line, &used);
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// CPUs of the quota: v2 "QUOTA PERIOD" ("max": none), v1 quota and period files (-1: none).
std::optional<double> quota_v2(const std::string& file) {
  const std::optional<std::string> line = read_first_line(file);
  if (!line) return std::nullopt;
  std::istringstream in(*line);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  try {
    const long long q = std::stoll(quota);
    if (q <= 0) return std::nullopt;
    return static_cast<double>(q) / static_cast<double>(period);
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<double> quota_v1(const std::string& dir) {
  const std::optional<long long> quota = read_number(dir + "/cpu.cfs_quota_us");
  const std::optional<long long> period = read_number(dir + "/cpu.cfs_period_us");
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

// The quota of the process's cgroup (its own directory, or the mount's root as seen from
// inside a container), v2 first.
std::optional<double> cgroup_cpus(const std::string& root) {
  std::ifstream in(root + "/proc/self/cgroup");
  std::string line;
  std::optional<double> best;
  auto take = [&](std::optional<double> q) {
    if (q && (!best || *q < *best)) best = q;
  };
  while (std::getline(in, line)) {
    // "ID:CONTROLLERS:PATH"; v2 is "0::PATH".
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (path == "/") path.clear();
    const std::string fs = root + "/sys/fs/cgroup";
    if (controllers.empty()) {
      for (const std::string& dir : {fs + path, fs + "/unified" + path, fs}) {
        if (auto q = quota_v2(dir + "/cpu.max")) {
          take(q);
          break;
        }
      }
      continue;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');) {
      if (name != "cpu") continue;
      for (const std::string& dir : {fs + "/" + controllers + path, fs + "/cpu" + path, fs + "/cpu"}) {
        if (auto q = quota_v1(dir)) {
          take(q);
          break;
        }
      }
    }
  }
  return best;
}

}  // namespace

int default_thread_count(const std::string& root, const std::vector<int>& allowed) {
  std::set<std::pair<long long, long long>> cores;  // (package, core), or (-1 - cpu, 0)
  for (int cpu : allowed) {
    const std::string topo = root + "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const std::optional<long long> package = read_number(topo + "physical_package_id");
    const std::optional<long long> core = read_number(topo + "core_id");
    if (package && core && *package >= 0) {
      cores.insert({*package, *core});
    } else {
      cores.insert({-1 - static_cast<long long>(cpu), 0});
    }
  }
  int n = static_cast<int>(cores.size());
  if (const std::optional<double> q = cgroup_cpus(root)) {
    n = std::min(n, static_cast<int>(std::ceil(*q - 1e-9)));
  }
  return std::max(1, n);
}

int default_thread_count() {
  static const int n = [] {
    std::vector<int> allowed;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) allowed.push_back(cpu);
      }
    }
    if (allowed.empty()) {
      const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      for (int cpu = 0; cpu < hw; ++cpu) allowed.push_back(cpu);
    }
    return default_thread_count("", allowed);
  }();
  return n;
}

}  // namespace paddock
