// ApplyRlimits and ResetScheduling in a forked child (they change the process).
// No privileges needed: they only lower, and what they reset anyone may reset.

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>

#include <string>

#include "core/cell_spec.h"
#include "cell/native/cgroup.h"
#include "forked_child.h"

namespace mcpcell {
namespace {

std::string Expect(int resource, const char* name, rlim_t soft, rlim_t hard) {
  struct rlimit r {};
  getrlimit(resource, &r);
  if (r.rlim_cur == soft && r.rlim_max == hard) return "";
  return std::string(name) + " is " + std::to_string(r.rlim_cur) + "/" + std::to_string(r.rlim_max) + ", want " +
         std::to_string(soft) + "/" + std::to_string(hard) + "; ";
}

TEST(Rlimits, EveryLimitIsSetFromTheTableNotInherited) {
  auto out = testing::RunInChild([] {
    Limits limits;
    limits.pids.value = 64;
    if (auto ok = ApplyRlimits(limits); !ok) return ok.error().Message();
    std::string report;
    report += Expect(RLIMIT_RTPRIO, "RTPRIO", 0, 0);
    report += Expect(RLIMIT_NICE, "NICE", 0, 0);
    report += Expect(RLIMIT_CORE, "CORE", 0, 0);
    report += Expect(RLIMIT_NPROC, "NPROC", 64, 64);
    struct rlimit sig {};
    getrlimit(RLIMIT_SIGPENDING, &sig);
    if (sig.rlim_max > 4096) report += "SIGPENDING above 4096; ";
    struct rlimit mem {};
    getrlimit(RLIMIT_MEMLOCK, &mem);
    if (mem.rlim_max > (8u << 20)) report += "MEMLOCK above 8 MiB; ";
    return report;
  });
  EXPECT_TRUE(out.exited_ok());
  EXPECT_EQ(out.report, "");
}

TEST(Rlimits, ACallersLowerHardLimitIsKept) {
  auto out = testing::RunInChild([] {
    struct rlimit low {100, 100};
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) return std::string("setrlimit NOFILE 100 failed");
    struct rlimit stack {1 << 20, 1 << 20};
    if (setrlimit(RLIMIT_STACK, &stack) != 0) return std::string("setrlimit STACK 1 MiB failed");
    Limits limits;  // nofile 4096, stack 8 MiB: never raised above the caller's hard limit
    if (auto ok = ApplyRlimits(limits); !ok) return ok.error().Message();
    return Expect(RLIMIT_NOFILE, "NOFILE", 100, 100) + Expect(RLIMIT_STACK, "STACK", 1 << 20, 1 << 20);
  });
  EXPECT_TRUE(out.exited_ok());
  EXPECT_EQ(out.report, "");
}

TEST(Rlimits, ResetSchedulingKeepsWhatOnlyLowersPriority) {
  auto out = testing::RunInChild([] {
    struct sched_param p {};
    if (sched_setscheduler(0, SCHED_BATCH, &p) != 0) return std::string("SCHED_BATCH refused");
    if (setpriority(PRIO_PROCESS, 0, 7) != 0) return std::string("nice 7 refused");
    if (auto ok = ResetScheduling(); !ok) return ok.error().Message();
    std::string report;
    if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) != SCHED_BATCH) report += "SCHED_BATCH was not kept; ";
    if (getpriority(PRIO_PROCESS, 0) != 7) report += "nice 7 was not kept; ";
    return report;
  });
  EXPECT_TRUE(out.exited_ok());
  EXPECT_EQ(out.report, "");
}

TEST(Rlimits, ResetSchedulingDropsRealTimeWhereTheCallerMaySetIt) {
  auto out = testing::RunInChild([] {
    struct sched_param p {};
    p.sched_priority = 1;
    if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) return std::string("SKIP");  // no CAP_SYS_NICE here
    if (auto ok = ResetScheduling(); !ok) return ok.error().Message();
    return (sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_OTHER ? std::string() : std::string("still real-time");
  });
  if (out.report == "SKIP") GTEST_SKIP() << "this user cannot set SCHED_FIFO (no CAP_SYS_NICE, RLIMIT_RTPRIO 0)";
  EXPECT_TRUE(out.exited_ok());
  EXPECT_EQ(out.report, "");
}

}  // namespace
}  // namespace mcpcell
