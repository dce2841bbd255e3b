// Privilege dropping in forked children, checked through /proc/self/status.
// Without root the child first enters a user namespace, where it holds every
// capability: exactly the position the cell is in.

#include "cell/native/privileges.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "forked_child.h"

namespace mcpcell {
namespace {

using testing::RunInChild;

constexpr char kSkip[] = "SKIP: ";

/// The value of one "Key:\tvalue" line of /proc/self/status.
std::string StatusField(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      auto v = line.substr(key.size() + 1);
      v = v.substr(v.find_first_not_of(" \t"));
      return v.substr(0, v.find_last_not_of(" \t") + 1);  // "Groups:" ends with a space
    }
  }
  return "<missing " + key + ">";
}

bool WriteFile(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

/// Root stays as it is; anyone else becomes root of a new user namespace
/// (uid/gid 0 mapped to themselves, setgroups denied). "" or why not.
std::string BecomeNamespaceRootUnlessRoot() {
  if (geteuid() == 0) return {};
  const auto uid = geteuid();
  const auto gid = getegid();
  if (unshare(CLONE_NEWUSER) != 0) {
    return std::string(kSkip) + "unprivileged user namespaces are unavailable: " + strerror(errno);
  }
  if (!WriteFile("/proc/self/setgroups", "deny") ||
      !WriteFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
      !WriteFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
    return std::string("writing the id maps failed: ") + strerror(errno) + "\n";
  }
  return {};
}

std::string ExpectAllCapsZero() {
  std::string r;
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    std::string v = StatusField(set);
    if (v != "0000000000000000") r += std::string(set) + " = " + v + "\n";
  }
  return r;
}

void SkipOrCheck(const testing::ChildOutcome& out) {
  if (out.report.rfind(kSkip, 0) == 0) GTEST_SKIP() << out.report.substr(sizeof kSkip - 1);
  EXPECT_TRUE(out.exited_ok()) << "status " << out.status;
  EXPECT_EQ(out.report, "");
}

TEST(Privileges, DropAllCapabilitiesEmptiesEverySet) {
  auto out = RunInChild([]() -> std::string {
    std::string r = BecomeNamespaceRootUnlessRoot();
    if (!r.empty()) return r;
    // Meaningful only if there was something to drop.
    if (StatusField("CapEff") == "0000000000000000") return "no capabilities to start with\n";
    auto st = DropAllCapabilities();
    if (!st.ok()) return "DropAllCapabilities: " + st.error().Message() + "\n";
    return ExpectAllCapsZero();
  });
  SkipOrCheck(out);
}

TEST(Privileges, SetNoNewPrivs) {
  auto out = RunInChild([]() -> std::string {
    auto st = SetNoNewPrivs();
    if (!st.ok()) return "SetNoNewPrivs: " + st.error().Message() + "\n";
    std::string v = StatusField("NoNewPrivs");
    return v == "1" ? std::string() : "NoNewPrivs = " + v + "\n";
  });
  SkipOrCheck(out);
}

// Root to nobody: ids, groups, then capabilities can still be dropped
// (PR_SET_KEEPCAPS kept them), and root cannot be regained.
TEST(Privileges, SwitchFromRootThenDrop) {
  if (geteuid() != 0) GTEST_SKIP() << "switching to another uid needs root (run as root to cover it)";
  auto out = RunInChild([]() -> std::string {
    auto st = SwitchUser(65534, 65534, true);
    if (!st.ok()) return "SwitchUser: " + st.error().Message() + "\n";
    std::string r;
    if (StatusField("Uid") != "65534\t65534\t65534\t65534") r += "Uid " + StatusField("Uid") + "\n";
    if (StatusField("Gid") != "65534\t65534\t65534\t65534") r += "Gid " + StatusField("Gid") + "\n";
    if (StatusField("Groups") != "65534") r += "Groups " + StatusField("Groups") + "\n";
    if (StatusField("CapEff") == "0000000000000000") r += "effective set lost in the switch\n";
    st = DropAllCapabilities();
    if (!st.ok()) return r + "DropAllCapabilities: " + st.error().Message() + "\n";
    r += ExpectAllCapsZero();
    if (setresuid(0, 0, 0) == 0) r += "could regain uid 0\n";
    return r;
  });
  SkipOrCheck(out);
}

// In a user namespace with setgroups denied, the unprivileged path.
TEST(Privileges, SwitchInUserNamespaceWithoutSetgroups) {
  if (geteuid() == 0) GTEST_SKIP() << "covers the unprivileged path (run as non-root to cover it)";
  auto out = RunInChild([]() -> std::string {
    std::string r = BecomeNamespaceRootUnlessRoot();
    if (!r.empty()) return r;
    auto st = SwitchUser(0, 0, false);
    if (!st.ok()) return "SwitchUser(0, 0): " + st.error().Message() + "\n";
    // uid 1 is not mapped: a clear error, not a silent half-switch.
    st = SwitchUser(1, 1, false);
    if (st.ok()) return "switched to an unmapped uid\n";
    if (st.error().err != EINVAL) return "unexpected error: " + st.error().Message() + "\n";
    st = DropAllCapabilities();
    if (!st.ok()) return "DropAllCapabilities: " + st.error().Message() + "\n";
    return ExpectAllCapsZero();
  });
  SkipOrCheck(out);
}

TEST(Privileges, SetgroupsRefusedIsAnError) {
  if (geteuid() == 0) GTEST_SKIP() << "root may call setgroups";
  auto out = RunInChild([]() -> std::string {
    auto st = SwitchUser(0, 0, true);
    if (st.ok()) return "non-root switched to root\n";
    if (st.error().what != "setgroups" || st.error().err != EPERM) {
      return "unexpected error: " + st.error().Message() + "\n";
    }
    return {};
  });
  SkipOrCheck(out);
}

TEST(Privileges, DropWithoutCapSetpcapIsAnError) {
  if (geteuid() == 0) GTEST_SKIP() << "root holds CAP_SETPCAP";
  auto out = RunInChild([]() -> std::string {
    if (StatusField("CapBnd") == "0000000000000000") return std::string(kSkip) + "bounding set already empty";
    auto st = DropAllCapabilities();
    if (st.ok()) return "dropped the bounding set without CAP_SETPCAP\n";
    if (st.error().err != EPERM) return "unexpected error: " + st.error().Message() + "\n";
    return {};
  });
  SkipOrCheck(out);
}

}  // namespace
}  // namespace mcpcell
