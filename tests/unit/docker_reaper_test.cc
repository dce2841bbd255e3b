// Which leftover containers a reaper may remove: only those whose supervisor
// ran in our pid namespace and is dead (same pid, same start time).
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "cell/docker/reaper.h"

namespace mcpcell::docker {
namespace {

TEST(DockerReaper, OwnProcessIsAliveWithItsStartTime) {
  std::string pid = std::to_string(::getpid());
  std::string start = ProcessStartTime(::getpid());
  ASSERT_FALSE(start.empty());
  EXPECT_TRUE(SupervisorAlive(pid, start));
  EXPECT_TRUE(SupervisorAlive(pid, ""));  // old labels without a start time
}

TEST(DockerReaper, ReusedPidIsDead) {
  std::string pid = std::to_string(::getpid());
  EXPECT_FALSE(SupervisorAlive(pid, "1"));  // another process had this pid before
}

TEST(DockerReaper, GarbageLabelsAreDead) {
  EXPECT_FALSE(SupervisorAlive("", ""));
  EXPECT_FALSE(SupervisorAlive("abc", ""));
  EXPECT_FALSE(SupervisorAlive("-5", ""));
  EXPECT_FALSE(SupervisorAlive("999999999", ""));
}

TEST(DockerReaper, OnlyDeadSupervisorsOfOurPidNamespace) {
  std::string ns = OwnPidNamespace();
  ASSERT_EQ(ns.rfind("pid:[", 0), 0U) << ns;
  std::string me = std::to_string(::getpid());
  std::string start = ProcessStartTime(::getpid());
  EXPECT_FALSE(Reapable(me, start, ns, ns)) << "a live supervisor's container";
  EXPECT_TRUE(Reapable("999999999", "", ns, ns)) << "a dead supervisor's container";
  EXPECT_FALSE(Reapable("999999999", "", "pid:[1]", ns)) << "another namespace's pid means nothing here";
  EXPECT_FALSE(Reapable("999999999", "", "", ns)) << "no namespace label: cannot judge";
}

}  // namespace
}  // namespace mcpcell::docker
