// Tests for the cgroup module: the pure parsers everywhere; real cgroups when
// running as root (or with a delegated v2 subtree); the non-root refusal by
// dropping to an unprivileged uid in a child when the test runs as root.

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cell/native/cgroup.h"
#include "cell/native/cgroup_internal.h"
#include "cell/native/cgroup_layout.h"
#include "cell/native/cgroup_parse.h"

namespace mcpcell {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

constexpr std::uint64_t kMiB = 1024 * 1024;

// ---------------------------------------------------------------- parsers

TEST(ParseProcCgroup, HybridMachine) {
  auto e = ParseProcCgroup(
      "9:name=systemd:/\n8:pids:/user.slice\n4:memory:/process_api/a01c\n"
      "2:cpu,cpuacct:/x\n0::/\n");
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[3].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(UnifiedCgroupPath(e), "/");
  EXPECT_EQ(V1CgroupPath(e, "memory"), "/process_api/a01c");
  EXPECT_EQ(V1CgroupPath(e, "cpuacct"), "/x");
  EXPECT_EQ(V1CgroupPath(e, "pids"), "/user.slice");
  EXPECT_EQ(V1CgroupPath(e, "blkio"), std::nullopt);
}

TEST(ParseProcCgroup, PureV2PathWithColonAndJunk) {
  auto e = ParseProcCgroup("garbage\n0::/user.slice/user-1000.slice/a:b.scope\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(UnifiedCgroupPath(e), "/user.slice/user-1000.slice/a:b.scope");
  EXPECT_EQ(V1CgroupPath(e, "memory"), std::nullopt);
}

TEST(ParseCgroupMounts, V1V2AndOthers) {
  const char* text =
      "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:7 - cgroup cgroup rw,cpu,cpuacct\n"
      "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime shared:9 master:3 - cgroup cgroup rw,memory\n"
      "39 30 0:36 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
      "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
  auto m = ParseCgroupMounts(text);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_TRUE(m[0].HasController("cpu"));
  EXPECT_TRUE(m[0].HasController("cpuacct"));
  EXPECT_FALSE(m[0].HasController("rw"));
  EXPECT_TRUE(m[1].HasController("memory"));
  EXPECT_FALSE(m[2].HasController("systemd"));
  EXPECT_TRUE(m[3].v2);
  EXPECT_TRUE(m[3].controllers.empty());
  EXPECT_EQ(ClassifyCgroupLayout(false, m), CgroupLayout::Kind::kV1);
}

TEST(ParseCgroupMounts, EscapedMountPointAndNonRootMount) {
  auto m = ParseCgroupMountLine("50 1 0:40 /sub\\040dir /mnt/my\\040cg rw - cgroup2 none rw");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mount_point, "/mnt/my cg");
  EXPECT_EQ(m->root, "/sub dir");
  EXPECT_FALSE(ParseCgroupMountLine("50 1 0:40 / /proc rw - proc proc rw"));
  EXPECT_FALSE(ParseCgroupMountLine("truncated line"));
}

TEST(ClassifyCgroupLayout, PureV2AndNone) {
  auto v2 = ParseCgroupMounts("1 0 0:1 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  EXPECT_EQ(ClassifyCgroupLayout(true, v2), CgroupLayout::Kind::kV2);
  EXPECT_EQ(ClassifyCgroupLayout(false, v2), CgroupLayout::Kind::kV2);
  EXPECT_EQ(ClassifyCgroupLayout(false, {}), CgroupLayout::Kind::kNone);
}

TEST(CgroupDirUnder, RootAndSubtreeMounts) {
  CgroupMount whole{"/sys/fs/cgroup", "/", true, {}};
  EXPECT_EQ(CgroupDirUnder(whole, "/"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDirUnder(whole, "/a/b"), "/sys/fs/cgroup/a/b");
  CgroupMount sub{"/sys/fs/cgroup", "/docker/abc", true, {}};
  EXPECT_EQ(CgroupDirUnder(sub, "/docker/abc"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDirUnder(sub, "/docker/abc/x"), "/sys/fs/cgroup/x");
  EXPECT_EQ(CgroupDirUnder(sub, "/docker/abcdef"), std::nullopt);
  EXPECT_EQ(CgroupDirUnder(sub, "/other"), std::nullopt);
}

TEST(CpuQuota, FromCores) {
  EXPECT_EQ(CpuQuotaMicros(1.5), 150000u);
  EXPECT_EQ(CpuQuotaMicros(2.0), 200000u);
  EXPECT_EQ(FormatCpuMax(0.5), "50000 100000");
  EXPECT_EQ(CpuQuotaMicros(0.001), 1000u);  // kernel minimum 1 ms
  EXPECT_EQ(CpuQuotaMicros(-1.0), 1000u);
}

TEST(CellId, FormatAndParse) {
  EXPECT_EQ(FormatCellId(1234, 0xabcu), "mcpcell-1234-00000abc");
  EXPECT_EQ(SupervisorPidFromCellId("mcpcell-1234-00000abc"), 1234);
  std::string id = NewCellId();
  EXPECT_EQ(SupervisorPidFromCellId(id), ::getpid()) << id;
  EXPECT_NE(NewCellId(), id);
  for (const char* bad : {"mcpcell-1234", "mcpcell--00000abc", "mcpcell-12x-00000abc",
                          "mcpcell-1234-00000ABC", "mcpcell-1234-abc", "other-1-00000000",
                          "mcpcell.slice", "mcpcell-0-00000000"}) {
    EXPECT_EQ(SupervisorPidFromCellId(bad), std::nullopt) << bad;
  }
}

TEST(NeededControllers, OnlyLimitsWithValues) {
  Limits l;
  EXPECT_TRUE(cgroup_internal::NeededControllers(l).empty());
  l.memory_bytes = {64 * kMiB, true};
  l.cpus = {1.0, false};
  auto n = cgroup_internal::NeededControllers(l);
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].controller, "memory");
  EXPECT_TRUE(n[0].requested);
  EXPECT_EQ(n[1].controller, "cpu");
  EXPECT_FALSE(n[1].requested);
}

TEST(CellCgroup, NoLimitsMeansNoCgroup) {
  std::vector<std::string> warnings;
  auto cg = CellCgroup::Create(Limits{}, NewCellId(), &warnings);
  ASSERT_TRUE(cg.ok()) << cg.error().Message();
  EXPECT_FALSE(cg->active());
  EXPECT_EQ(cg->version(), "none");
  EXPECT_TRUE(warnings.empty());
}

TEST(CellCgroup, RejectsMalformedCellId) {
  Limits l;
  l.pids = {16, true};
  auto cg = CellCgroup::Create(l, "../../escape", nullptr);
  ASSERT_FALSE(cg.ok());
  EXPECT_TRUE(Contains(cg.error().Message(), "mcpcell-<pid>-<8 hex>")) << cg.error().Message();
}

// ---------------------------------------------------------------- helpers

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

bool DirExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Reads from fd until EOF or until `terminator` has been seen.
std::string ReadUntil(int fd, const std::string& terminator = {}) {
  std::string out;
  char buf[512];
  while (terminator.empty() || out.find(terminator) == std::string::npos) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// The file of one controller in the cell: v1 dirs are per hierarchy.
std::string LimitFile(const CellCgroup& cg, const std::string& v1_controller_mount_part,
                      const std::string& file) {
  for (const auto& d : cg.dirs()) {
    if (cg.version() == "v2" || d.find("/" + v1_controller_mount_part + "/") != std::string::npos) {
      return d + "/" + file;
    }
  }
  return "";
}

bool CanCreateCgroups(std::string* why) {
  Limits l;
  l.pids = {64, true};
  auto cg = CellCgroup::Create(l, NewCellId(), nullptr);
  if (!cg.ok()) {
    *why = "cannot create cgroups here: " + cg.error().Message();
    return false;
  }
  return cg->active();
}

#define SKIP_UNLESS_CGROUPS_WRITABLE()                                    \
  do {                                                                   \
    std::string why_;                                                    \
    if (!CanCreateCgroups(&why_)) GTEST_SKIP() << why_;                  \
  } while (0)

// ---------------------------------------------------------------- real cgroups

TEST(CellCgroupReal, LimitsAreWrittenAndPidsEnforced) {
  SKIP_UNLESS_CGROUPS_WRITABLE();
  Limits limits;
  limits.memory_bytes = {64 * kMiB, true};
  limits.pids = {16, true};
  limits.cpus = {0.5, true};
  std::vector<std::string> warnings;
  std::string id = NewCellId();
  std::vector<std::string> dirs;
  {
    auto cg = CellCgroup::Create(limits, id, &warnings);
    ASSERT_TRUE(cg.ok()) << cg.error().Message();
    ASSERT_TRUE(cg->active());
    EXPECT_TRUE(warnings.empty());
    dirs = cg->dirs();
    std::cerr << "[ info ] cgroup " << cg->version() << " dirs:";
    for (const auto& d : dirs) std::cerr << " " << d;
    std::cerr << "\n";

    if (cg->version() == "v1") {
      EXPECT_EQ(Trim(ReadFile(LimitFile(*cg, "memory", "memory.limit_in_bytes"))), "67108864");
      EXPECT_EQ(Trim(ReadFile(LimitFile(*cg, "pids", "pids.max"))), "16");
      EXPECT_EQ(Trim(ReadFile(LimitFile(*cg, "cpu", "cpu.cfs_quota_us"))), "50000");
      EXPECT_EQ(Trim(ReadFile(LimitFile(*cg, "cpu", "cpu.cfs_period_us"))), "100000");
    } else {
      EXPECT_EQ(Trim(ReadFile(cg->dirs()[0] + "/memory.max")), "67108864");
      EXPECT_EQ(Trim(ReadFile(cg->dirs()[0] + "/pids.max")), "16");
      EXPECT_EQ(Trim(ReadFile(cg->dirs()[0] + "/cpu.max")), "50000 100000");
    }

    int go[2], result[2];
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(result, O_CLOEXEC), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::setpgid(0, 0);  // one group: the test kills the child and all it forked at once
      char c;
      if (::read(go[0], &c, 1) != 1) ::_exit(2);
      int forked = 0;
      for (int i = 0; i < 40; ++i) {
        pid_t p = ::fork();
        if (p == 0) {
          ::pause();
          ::_exit(0);
        }
        if (p > 0) ++forked;
      }
      WriteAll(result[1], std::to_string(forked) + "\n");
      ::pause();
      ::_exit(0);
    }
    ::setpgid(child, child);
    ::close(go[0]);
    ::close(result[1]);
    ASSERT_TRUE(cg->AddProcess(child).ok());
    std::string proc_cgroup = ReadFile("/proc/" + std::to_string(child) + "/cgroup");
    EXPECT_TRUE(Contains(proc_cgroup, id)) << proc_cgroup;
    WriteAll(go[1], "g");
    std::string forked = Trim(ReadUntil(result[0], "\n"));
    ::close(go[1]);
    ::close(result[0]);
    ::kill(-child, SIGKILL);
    int st;
    while (::waitpid(-child, &st, 0) > 0) {
    }
    ASSERT_FALSE(forked.empty());
    std::cerr << "[ info ] with pids.max=16 the cell forked " << forked << " of 40\n";
    EXPECT_LT(std::stoi(forked), 40);
    EXPECT_LE(std::stoi(forked), 15);  // 16 pids including the child itself
  }
  for (const auto& d : dirs) EXPECT_FALSE(DirExists(d)) << d;
}

TEST(CellCgroupReal, MemoryLimitKillsA100MiBAllocation) {
  SKIP_UNLESS_CGROUPS_WRITABLE();
  Limits limits;
  limits.memory_bytes = {64 * kMiB, true};
  auto cg = CellCgroup::Create(limits, NewCellId(), nullptr);
  ASSERT_TRUE(cg.ok()) << cg.error().Message();
  int go[2];
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(2);
    size_t size = 100 * kMiB;
    void* mem = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) ::_exit(3);
    // Touch every page through volatile so the compiler cannot drop the
    // writes: only resident pages are charged to the cgroup.
    volatile char* p = static_cast<char*>(mem);
    for (size_t i = 0; i < size; i += 4096) p[i] = 1;
    ::_exit(p[size - 4096] == 1 ? 0 : 4);
  }
  ::close(go[0]);
  ASSERT_TRUE(cg->AddProcess(child).ok());
  WriteAll(go[1], "g");
  ::close(go[1]);
  int st = 0;
  ASSERT_EQ(::waitpid(child, &st, 0), child);
  auto peak = cg->PeakMemoryBytes();
  std::cerr << "[ info ] 100 MiB allocation under a 64 MiB limit: "
            << (WIFSIGNALED(st) ? "killed by signal " + std::to_string(WTERMSIG(st))
                                : "exited " + std::to_string(WEXITSTATUS(st)))
            << ", peak " << (peak ? std::to_string(*peak) : "n/a") << " bytes\n";
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "status " << st;
  ASSERT_TRUE(peak.has_value());
  EXPECT_GT(*peak, 0u);
  EXPECT_LE(*peak, 64 * kMiB);
}

TEST(CellCgroupReal, ReapRemovesOnlyDeadSupervisorsEmptyDirs) {
  SKIP_UNLESS_CGROUPS_WRITABLE();
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  // Create real cell dirs, one per supervisor, and keep them from being removed
  // by moving the CellCgroup's dirs list out of reach: re-create by name.
  Limits l;
  l.pids = {8, true};
  std::vector<std::string> stale_dirs, live_dirs;
  {
    auto stale = CellCgroup::Create(l, FormatCellId(dead, 0xdeadbeef), nullptr);
    ASSERT_TRUE(stale.ok()) << stale.error().Message();
    stale_dirs = stale->dirs();
    auto live = CellCgroup::Create(l, FormatCellId(::getpid(), 0xdeadbeef), nullptr);
    ASSERT_TRUE(live.ok()) << live.error().Message();
    live_dirs = live->dirs();
  }
  // The destructors removed them; put back empty dirs with the same names.
  for (const auto& d : stale_dirs) ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
  for (const auto& d : live_dirs) ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
  int removed = ReapStaleCgroups();
  EXPECT_GE(removed, static_cast<int>(stale_dirs.size()));
  for (const auto& d : stale_dirs) EXPECT_FALSE(DirExists(d)) << d;
  for (const auto& d : live_dirs) {
    EXPECT_TRUE(DirExists(d)) << d;
    ::rmdir(d.c_str());
  }
}

// The janitor must clean up after a supervisor killed with SIGKILL.
TEST(CellCgroupReal, JanitorRemovesCgroupsAfterSupervisorIsKilled) {
  SKIP_UNLESS_CGROUPS_WRITABLE();
  // Orphans (the cell's process, the janitor) are re-parented to us, so we can reap them.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  int info[2];
  ASSERT_EQ(::pipe2(info, O_CLOEXEC), 0);
  pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {  // plays the supervisor
    ::close(info[0]);
    Limits l;
    l.memory_bytes = {64 * kMiB, true};
    l.pids = {16, true};
    auto cg = CellCgroup::Create(l, NewCellId(), nullptr);
    if (!cg.ok()) {
      WriteAll(info[1], "ERROR " + cg.error().Message() + "\nEND\n");
      ::_exit(1);
    }
    if (Status s = StartCgroupJanitor(*cg); !s.ok()) {
      WriteAll(info[1], "ERROR " + s.error().Message() + "\nEND\n");
      ::_exit(1);
    }
    pid_t cell = ::fork();
    if (cell == 0) {
      ::pause();
      ::_exit(0);
    }
    if (Status s = cg->AddProcess(cell); !s.ok()) {
      WriteAll(info[1], "ERROR " + s.error().Message() + "\nEND\n");
      ::_exit(1);
    }
    std::string msg = "CELL " + std::to_string(cell) + "\n";
    for (const auto& d : cg->dirs()) msg += "DIR " + d + "\n";
    WriteAll(info[1], msg + "END\n");
    while (true) ::pause();
  }
  ::close(info[1]);
  std::string text = ReadUntil(info[0], "END\n");
  ::close(info[0]);
  ASSERT_EQ(text.find("ERROR"), std::string::npos) << text;
  pid_t cell = -1;
  std::vector<std::string> dirs;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("CELL ", 0) == 0) cell = std::stoi(line.substr(5));
    if (line.rfind("DIR ", 0) == 0) dirs.push_back(line.substr(4));
  }
  ASSERT_GT(cell, 0) << text;
  ASSERT_FALSE(dirs.empty()) << text;
  for (const auto& d : dirs) EXPECT_TRUE(DirExists(d)) << d;

  ASSERT_EQ(::kill(helper, SIGKILL), 0);
  ASSERT_EQ(::waitpid(helper, nullptr, 0), helper);
  // The cell still runs, so its cgroups must still be there.
  for (const auto& d : dirs) EXPECT_TRUE(DirExists(d)) << d;
  ASSERT_EQ(::kill(cell, SIGKILL), 0);
  ASSERT_EQ(::waitpid(cell, nullptr, 0), cell);  // re-parented to us (subreaper)

  // Bounded wait: the janitor polls for up to 10 s before it gives up waiting.
  bool gone = false;
  for (int i = 0; i < 750 && !gone; ++i) {
    gone = true;
    for (const auto& d : dirs) gone = gone && !DirExists(d);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const auto& d : dirs) EXPECT_FALSE(DirExists(d)) << d;
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {  // the janitor, if it has exited
  }
}

// The fd handed to the janitor (the cell's mount namespace, in a run) stays
// open for as long as the janitor lives, after the supervisor's copy is
// closed, and closes when it exits: a pipe's write end stands in for it.
TEST(CellCgroupReal, JanitorHoldsTheGivenFdUntilItExits) {
  SKIP_UNLESS_CGROUPS_WRITABLE();
  int held[2];
  ASSERT_EQ(::pipe2(held, O_CLOEXEC), 0);
  {
    Limits l;
    l.pids = {16, true};
    auto cg = CellCgroup::Create(l, NewCellId(), nullptr);
    ASSERT_TRUE(cg.ok()) << cg.error().Message();
    ASSERT_TRUE(StartCgroupJanitor(*cg, held[1]).ok());
    ::close(held[1]);
    struct pollfd open_fd{held[0], POLLIN, 0};
    EXPECT_EQ(::poll(&open_fd, 1, 0), 0) << "the janitor must still hold the write end";
  }  // the cgroup is removed and the janitor's pipe closed: it exits
  // A guard against a hang, not a time limit: the janitor exits at once here.
  struct pollfd eof{held[0], POLLIN, 0};
  ASSERT_EQ(::poll(&eof, 1, 30000), 1);
  char c = 0;
  EXPECT_EQ(::read(held[0], &c, 1), 0) << "EOF: the janitor closed it at its exit";
  ::close(held[0]);
}

// The v2 code path on a hybrid machine: its "unified" hierarchy has none of our
// controllers, so a requested limit must fail and a default one must warn;
// the cell's cgroup still exists and cgroup.kill empties it on removal.
TEST(CellCgroupV2Real, UnifiedHierarchyWithoutOurControllers) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to write the v2 root's subtree_control";
  auto layout = DetectCgroupLayout();
  ASSERT_TRUE(layout.ok()) << layout.error().Message();
  const CgroupMount* v2 = layout->V2Mount();
  if (v2 == nullptr) GTEST_SKIP() << "no cgroup2 mount";
  if (Contains(ReadFile(v2->mount_point + "/cgroup.controllers"), "memory")) {
    GTEST_SKIP() << "v2 has the memory controller here; CellCgroupReal covers it";
  }
  CgroupLayout only_v2;
  only_v2.kind = CgroupLayout::Kind::kV2;
  only_v2.mounts = {*v2};
  only_v2.self = layout->self;

  Limits requested;
  requested.memory_bytes = {64 * kMiB, true};
  std::string id = NewCellId();
  auto refused = cgroup_internal::CreateV2Cgroup(only_v2, requested, id, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.error().Message(), "--memory needs the cgroup v2 memory controller"))
      << refused.error().Message();

  Limits fallback;
  fallback.memory_bytes = {64 * kMiB, false};
  std::vector<std::string> warnings;
  auto made = cgroup_internal::CreateV2Cgroup(only_v2, fallback, id, &warnings);
  ASSERT_TRUE(made.ok()) << made.error().Message();
  ASSERT_EQ(made->version, "v2");
  ASSERT_EQ(made->dirs.size(), 1u);
  EXPECT_TRUE(made->memory_dir.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Contains(warnings[0], "default memory limit not enforced")) << warnings[0];
  std::string dir = made->dirs[0];
  EXPECT_TRUE(Contains(dir, id)) << dir;

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::ofstream(dir + "/cgroup.procs") << child;
  EXPECT_TRUE(Contains(ReadFile("/proc/" + std::to_string(child) + "/cgroup"), id));
  // Removal with a live process: cgroup.kill first, then rmdir (retried on EBUSY).
  Status removed = cgroup_internal::RemoveCellDirs(made->dirs);
  int st = 0;
  ASSERT_EQ(::waitpid(child, &st, 0), child);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "status " << st;
  if (!removed.ok()) {  // the zombie may have pinned it for a moment; retry once reaped
    removed = cgroup_internal::RemoveCellDirs(made->dirs);
  }
  EXPECT_TRUE(removed.ok()) << removed.error().Message();
  EXPECT_FALSE(DirExists(dir)) << dir;
}

// ---------------------------------------------------------------- unprivileged

struct Outcome {
  bool ok = false;
  bool active = false;
  std::string text;  ///< the error message, or the warnings joined
};

// Runs Create in a child with an unprivileged uid (when we are root) and reports.
Outcome CreateUnprivileged(const Limits& limits) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return {};
  pid_t child = ::fork();
  if (child == 0) {
    ::close(p[0]);
    if (::geteuid() == 0 && (::setresgid(65534, 65534, 65534) != 0 || ::setgroups(0, nullptr) != 0 ||
                             ::setresuid(65534, 65534, 65534) != 0)) {
      ::_exit(9);
    }
    std::vector<std::string> warnings;
    auto cg = CellCgroup::Create(limits, NewCellId(), &warnings);
    std::string out;
    if (!cg.ok()) {
      out = "E" + cg.error().Message();
    } else {
      out = std::string(cg->active() ? "A" : "O");
      for (const auto& w : warnings) out += w + "\n";
    }
    WriteAll(p[1], out);
    ::_exit(0);
  }
  ::close(p[1]);
  std::string text = ReadUntil(p[0]);
  ::close(p[0]);
  ::waitpid(child, nullptr, 0);
  Outcome o;
  if (text.empty()) return o;
  o.ok = text[0] != 'E';
  o.active = text[0] == 'A';
  o.text = text.substr(1);
  return o;
}

TEST(CellCgroupUnprivileged, RequestedLimitIsAnErrorNamingTheController) {
  Limits limits;
  limits.memory_bytes = {64 * kMiB, true};
  Outcome o = CreateUnprivileged(limits);
  if (o.ok && o.active) GTEST_SKIP() << "cgroups are delegated to this uid: nothing to refuse";
  ASSERT_FALSE(o.ok) << "expected an error, got warnings: " << o.text;
  std::cerr << "[ info ] " << o.text << "\n";
  EXPECT_TRUE(Contains(o.text, "--memory")) << o.text;
  EXPECT_TRUE(Contains(o.text, "not delegated")) << o.text;
  EXPECT_TRUE(Contains(o.text, "drop --memory")) << o.text;
  if (Contains(o.text, "cgroup v1")) {
    EXPECT_TRUE(Contains(o.text, "cgroup v1 memory controller at")) << o.text;
  }
}

TEST(CellCgroupUnprivileged, DefaultLimitIsAWarning) {
  Limits limits;
  limits.pids = {256, false};
  Outcome o = CreateUnprivileged(limits);
  if (o.ok && o.active) GTEST_SKIP() << "cgroups are delegated to this uid: nothing to refuse";
  ASSERT_TRUE(o.ok) << o.text;
  EXPECT_TRUE(Contains(o.text, "default pids limit not enforced")) << o.text;
  EXPECT_TRUE(Contains(o.text, "pids")) << o.text;
}

// ---------------------------------------------------------------- rlimits

TEST(ApplyRlimits, SetsAndClampsInAChild) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Limits l;
    l.nofile = 64;
    l.core_bytes = 0;
    l.pids.value = 77;
    if (!ApplyRlimits(l).ok()) ::_exit(10);
    struct rlimit r {};
    ::getrlimit(RLIMIT_NOFILE, &r);
    if (r.rlim_cur != 64 || r.rlim_max != 64) ::_exit(11);
    ::getrlimit(RLIMIT_CORE, &r);
    if (r.rlim_cur != 0 || r.rlim_max != 0) ::_exit(12);
    ::getrlimit(RLIMIT_NPROC, &r);
    if (r.rlim_cur != 77) ::_exit(13);
    // Above the (now 64) hard limit: clamped, not an error.
    l.nofile = 1ull << 40;
    if (!ApplyRlimits(l).ok()) ::_exit(14);
    ::getrlimit(RLIMIT_NOFILE, &r);
    if (r.rlim_cur != 64 || r.rlim_max != 64) ::_exit(15);
    ::_exit(0);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0) << "see the _exit codes in the child";
}

}  // namespace
}  // namespace mcpcell
