// A process's ids through its pidfd (pidfd_creds.h): the same eight numbers
// as its status file's Uid: and Gid: lines, and an exited process is gone.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "util/pidfd_creds.h"

namespace mcpcell {
namespace {

// The four numbers after `key` in /proc/PID/status.
std::array<std::uint32_t, 4> StatusIds(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::array<std::uint32_t, 4> ids{};
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    for (auto& id : ids) fields >> id;
  }
  return ids;
}

TEST(PidfdCreds, TheSameIdsAsTheStatusFile) {
  std::array<std::uint32_t, 8> ids{};
  PidfdCreds got = ReadPidfdCreds(::getpid(), &ids);
  if (got == PidfdCreds::kUnsupported) GTEST_SKIP() << "this kernel has no PIDFD_GET_INFO (Linux 6.13)";
  ASSERT_EQ(got, PidfdCreds::kRead);
  auto uids = StatusIds(::getpid(), "Uid:");
  auto gids = StatusIds(::getpid(), "Gid:");
  EXPECT_EQ((std::array<std::uint32_t, 8>{uids[0], uids[1], uids[2], uids[3], gids[0], gids[1], gids[2], gids[3]}), ids);
}

TEST(PidfdCreds, AReapedProcessIsGone) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  std::array<std::uint32_t, 8> ids{};
  PidfdCreds got = ReadPidfdCreds(child, &ids);
  if (got == PidfdCreds::kUnsupported) GTEST_SKIP() << "no pidfd_open";
  EXPECT_EQ(got, PidfdCreds::kGone);
}

}  // namespace
}  // namespace mcpcell
