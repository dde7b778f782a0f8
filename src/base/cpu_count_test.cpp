#include "base/cpu_count.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace paddock {
namespace {

namespace fs = std::filesystem;

// A fake /sys and /proc under a temporary directory.
class FakeRoot {
 public:
  FakeRoot() : dir_(fs::temp_directory_path() / ("paddock_cpu_count_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~FakeRoot() { fs::remove_all(dir_); }

  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  void cpu(int n, int package, int core) const {
    const std::string topo = "sys/devices/system/cpu/cpu" + std::to_string(n) + "/topology/";
    write(topo + "physical_package_id", std::to_string(package));
    write(topo + "core_id", std::to_string(core));
  }
  std::string root() const { return dir_.string(); }

 private:
  fs::path dir_;
};

TEST(CpuCount, OneThreadPerPhysicalCoreOfTheAllowedCpus) {
  FakeRoot r;
  // Two cores with two hardware threads each (cpu0/cpu2 and cpu1/cpu3 are siblings).
  r.cpu(0, 0, 0);
  r.cpu(1, 0, 1);
  r.cpu(2, 0, 0);
  r.cpu(3, 0, 1);
  EXPECT_EQ(default_thread_count(r.root(), {0, 1, 2, 3}), 2);
  EXPECT_EQ(default_thread_count(r.root(), {0, 2}), 1);  // affinity: both threads of one core
  EXPECT_EQ(default_thread_count(r.root(), {2, 3}), 2);
  EXPECT_EQ(default_thread_count(r.root(), {}), 1);
}

TEST(CpuCount, CoresOfDifferentPackagesAndCpusWithoutTopologyCountApart) {
  FakeRoot r;
  r.cpu(0, 0, 0);
  r.cpu(1, 1, 0);  // the same core id on a second socket
  EXPECT_EQ(default_thread_count(r.root(), {0, 1}), 2);
  EXPECT_EQ(default_thread_count(r.root(), {0, 1, 5, 6}), 4);  // no topology for cpu5, cpu6
}

TEST(CpuCount, CgroupV2QuotaCapsRoundedUp) {
  FakeRoot r;
  for (int c = 0; c < 8; ++c) r.cpu(c, 0, c);
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  r.write("proc/self/cgroup", "0::/app.slice/run.scope");
  r.write("sys/fs/cgroup/app.slice/run.scope/cpu.max", "150000 100000");
  EXPECT_EQ(default_thread_count(r.root(), all), 2);
  r.write("sys/fs/cgroup/app.slice/run.scope/cpu.max", "max 100000");
  EXPECT_EQ(default_thread_count(r.root(), all), 8);
  // Inside a container the cgroup is the mount's root.
  r.write("proc/self/cgroup", "0::/");
  r.write("sys/fs/cgroup/cpu.max", "300000 100000");
  EXPECT_EQ(default_thread_count(r.root(), all), 3);
  EXPECT_EQ(default_thread_count(r.root(), {0, 1}), 2);  // the cores, when fewer than the quota
}

TEST(CpuCount, CgroupV1QuotaCaps) {
  FakeRoot r;
  for (int c = 0; c < 4; ++c) r.cpu(c, 0, c);
  r.write("proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc");
  r.write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "100000");
  r.write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000");
  EXPECT_EQ(default_thread_count(r.root(), {0, 1, 2, 3}), 1);
  r.write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1");  // no limit
  EXPECT_EQ(default_thread_count(r.root(), {0, 1, 2, 3}), 4);
}

TEST(CpuCount, TheRunningSystemGivesAtLeastOne) {
  const int n = default_thread_count();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, 4096);
}

}  // namespace
}  // namespace paddock
