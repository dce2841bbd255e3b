// The doctor's parsers, fed with sample file contents from real machines.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "doctor/parse.h"
#include "doctor/probe.h"

namespace mcpcell::doctor {
namespace {

// A hybrid host (this project's build machine): v1 hierarchies plus an empty "unified" v2.
constexpr const char* kHybridMountinfo =
    "22 1 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

constexpr const char* kHybridProcCgroup =
    "9:name=systemd:/\n"
    "8:pids:/\n"
    "4:memory:/process_api/2d647596dc656a774e1397af1e75eb35\n"
    "1:cpu,cpuacct:/user.slice\n"
    "0::/\n";

TEST(ParseMountinfo, ReadsFieldsAroundOptionalOnes) {
  auto mounts = ParseMountinfo(kHybridMountinfo);
  ASSERT_EQ(mounts.size(), 7u);
  EXPECT_EQ(mounts[0].mount_point, "/sys");
  EXPECT_EQ(mounts[0].fstype, "sysfs");
  EXPECT_EQ(mounts[2].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(mounts[2].fstype, "cgroup");
  EXPECT_EQ(mounts[2].super_options, "rw,cpu,cpuacct");
  EXPECT_EQ(mounts[2].root, "/");
}

TEST(ParseMountinfo, DecodesEscapesAndSkipsGarbage) {
  auto mounts = ParseMountinfo(
      "not a mountinfo line\n"
      "50 1 8:1 /a\\040b /mnt/with\\040space rw - ext4 /dev/sda1 rw\n"
      "51 1 8:1 / /x rw\n");
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].root, "/a b");
  EXPECT_EQ(mounts[0].mount_point, "/mnt/with space");
  EXPECT_EQ(mounts[0].source, "/dev/sda1");
}

TEST(DecodeOctalEscapes, LeavesIncompleteEscapesAlone) {
  EXPECT_EQ(DecodeOctalEscapes("a\\011b"), "a\tb");
  EXPECT_EQ(DecodeOctalEscapes("a\\01"), "a\\01");
  EXPECT_EQ(DecodeOctalEscapes("a\\xyz"), "a\\xyz");
}

TEST(FindCgroupMounts, RecognisesHybrid) {
  CgroupMounts m = FindCgroupMounts(ParseMountinfo(kHybridMountinfo));
  EXPECT_EQ(m.Version(), "hybrid");
  ASSERT_TRUE(m.v2.has_value());
  EXPECT_EQ(m.v2->mount_point, "/sys/fs/cgroup/unified");
  ASSERT_EQ(m.v1.count("memory"), 1u);
  EXPECT_EQ(m.v1.at("memory").mount_point, "/sys/fs/cgroup/memory");
  EXPECT_EQ(m.v1.at("cpuacct").mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(m.v1.count("name=systemd"), 1u);
  EXPECT_EQ(m.v1.count("xattr"), 1u);  // a mount flag, harmless: no controller is named so
  EXPECT_EQ(m.v1.count("rw"), 0u);
}

TEST(FindCgroupMounts, PureV2AndNone) {
  auto v2 = FindCgroupMounts(ParseMountinfo(
      "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"));
  EXPECT_EQ(v2.Version(), "v2");
  EXPECT_TRUE(v2.v1.empty());
  EXPECT_EQ(FindCgroupMounts(ParseMountinfo("22 1 0:20 / /sys rw - sysfs sysfs rw\n")).Version(), "none");
  auto v1 = FindCgroupMounts(ParseMountinfo("34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"));
  EXPECT_EQ(v1.Version(), "v1");
}

TEST(ParseProcCgroup, SplitsControllersAndKeepsColonsInPath) {
  auto c = ParseProcCgroup(std::string(kHybridProcCgroup) + "7:blkio:/a:b\nbogus\n");
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0].hierarchy, 9);
  EXPECT_EQ(c[0].controllers, std::vector<std::string>{"name=systemd"});
  EXPECT_EQ(c[3].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(c[3].path, "/user.slice");
  EXPECT_EQ(c[4].hierarchy, 0);
  EXPECT_TRUE(c[4].controllers.empty());
  EXPECT_EQ(c[4].path, "/");
  EXPECT_EQ(c[5].path, "/a:b");
}

TEST(CgroupDir, JoinsMountAndPathRespectingMountRoot) {
  MountEntry root_mount{"/", "/sys/fs/cgroup/memory", "cgroup", "cgroup", "rw,memory"};
  EXPECT_EQ(CgroupDir(root_mount, "/process_api/x"), "/sys/fs/cgroup/memory/process_api/x");
  EXPECT_EQ(CgroupDir(root_mount, "/"), "/sys/fs/cgroup/memory");

  // Inside a container the mount shows only its own subtree.
  MountEntry sub{"/docker/abc", "/sys/fs/cgroup", "cgroup2", "cgroup2", "rw"};
  EXPECT_EQ(CgroupDir(sub, "/docker/abc/inner"), "/sys/fs/cgroup/inner");
  EXPECT_EQ(CgroupDir(sub, "/docker/abc"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDir(sub, "/docker/abcd"), std::nullopt);
  EXPECT_EQ(CgroupDir(sub, "/user.slice"), std::nullopt);
  // A cgroup namespace shows cgroups outside it with "/.." (cgroup_namespaces(7)).
  EXPECT_EQ(CgroupDir(root_mount, "/../other"), std::nullopt);
}

TEST(StatusField, FindsSeccompExactly) {
  const char* status =
      "Name:\tcat\nNoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\nSpeculation_Store_Bypass:\tvulnerable\n";
  EXPECT_EQ(StatusField(status, "Seccomp"), "2");
  EXPECT_EQ(StatusField(status, "Seccomp_filters"), "1");
  EXPECT_EQ(StatusField(status, "NoNewPrivs"), "0");
  EXPECT_EQ(StatusField(status, "Secc"), std::nullopt);
  EXPECT_EQ(StatusField("Name:\tcat\n", "Seccomp"), std::nullopt);
}

TEST(SplitWords, ActionsAvail) {
  EXPECT_EQ(SplitWords("kill_process kill_thread trap errno user_notif trace log allow\n"),
            (std::vector<std::string>{"kill_process", "kill_thread", "trap", "errno", "user_notif", "trace",
                                      "log", "allow"}));
  EXPECT_TRUE(SplitWords(" \n").empty());
}

TEST(ParseSysctlInt, Values) {
  EXPECT_EQ(ParseSysctlInt("96365\n"), 96365);
  EXPECT_EQ(ParseSysctlInt("0\n"), 0);
  EXPECT_EQ(ParseSysctlInt("1"), 1);
  EXPECT_EQ(ParseSysctlInt("-1\n"), -1);
  EXPECT_EQ(ParseSysctlInt(""), std::nullopt);
  EXPECT_EQ(ParseSysctlInt("1 2\n"), std::nullopt);
  EXPECT_EQ(ParseSysctlInt("yes"), std::nullopt);
}

TEST(ParseKernelRelease, CommonShapes) {
  auto v = ParseKernelRelease("6.18.44-fc-v769");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 6);
  EXPECT_EQ(v->minor, 18);
  EXPECT_EQ(v->patch, 44);
  v = ParseKernelRelease("5.15.0-91-generic");
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->AtLeast(5, 13));
  EXPECT_FALSE(v->AtLeast(5, 16));
  EXPECT_FALSE(v->AtLeast(6, 0));
  v = ParseKernelRelease("6.1-rc2");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->minor, 1);
  EXPECT_EQ(v->patch, 0);
  EXPECT_FALSE(ParseKernelRelease("linux"));
  EXPECT_FALSE(ParseKernelRelease("6"));
  EXPECT_TRUE(ParseKernelRelease("4.19.0")->AtLeast(4, 19));
  EXPECT_FALSE(ParseKernelRelease("4.19.0")->AtLeast(5, 3));
}

TEST(ParseHttpResponse, DockerPing) {
  const char* raw =
      "HTTP/1.1 200 OK\r\nApi-Version: 1.43\r\nContent-Length: 2\r\nContent-Type: text/plain; charset=utf-8\r\n"
      "Docker-Experimental: false\r\n\r\nOK";
  auto r = ParseHttpResponse(raw);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->headers.at("api-version"), "1.43");
  EXPECT_EQ(r->body, "OK");
}

TEST(ParseHttpResponse, IncompleteUntilContentLengthArrives) {
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"));
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nO"));
  EXPECT_TRUE(ParseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK"));
  EXPECT_FALSE(ParseHttpResponse("SSH-2.0-OpenSSH\r\n\r\n"));
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 abc OK\r\n\r\n"));
}

TEST(ParseHttpResponse, Chunked) {
  const char* raw =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\n{\"a\":\r\n3;ext=1\r\n 1}\r\n0\r\n\r\n";
  auto r = ParseHttpResponse(raw);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "{\"a\": 1}");
  EXPECT_FALSE(ParseHttpResponse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\""));
}

TEST(UnixSocketPathFromHost, OnlyUnix) {
  EXPECT_EQ(UnixSocketPathFromHost("unix:///run/user/1000/docker.sock"), "/run/user/1000/docker.sock");
  EXPECT_EQ(UnixSocketPathFromHost("tcp://127.0.0.1:2375"), "");
  EXPECT_EQ(UnixSocketPathFromHost(""), "");
}

TEST(ParseDockerRuntimes, DaemonJsonAndInfo) {
  auto daemon = ParseDockerRuntimes(
      R"({"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}}})");
  ASSERT_EQ(daemon.size(), 1u);
  EXPECT_EQ(daemon.at("runsc"), "/usr/bin/runsc");
  EXPECT_EQ(GvisorRuntimes(daemon), std::vector<std::string>{"runsc"});

  auto info = ParseDockerRuntimes(
      R"({"ServerVersion": "24.0.5", "Runtimes": {"io.containerd.runc.v2": {"path": "runc"},
          "runc": {"path": "runc"}, "sandboxed": {"path": "/opt/gvisor/runsc"}}})");
  EXPECT_EQ(info.size(), 3u);
  EXPECT_EQ(GvisorRuntimes(info), std::vector<std::string>{"sandboxed"});

  EXPECT_TRUE(ParseDockerRuntimes("{not json").empty());
  EXPECT_TRUE(ParseDockerRuntimes(R"({"log-driver": "json-file"})").empty());
  EXPECT_TRUE(GvisorRuntimes(ParseDockerRuntimes(R"({"runtimes": {"crun": {"path": "/usr/bin/crun"}}})")).empty());
}

TEST(Report, JsonAndTableCarryEveryCheck) {
  MachineReport report;
  report.checks.push_back({"landlock", Probe::Status::kOk, "ABI 7", "", ""});
  report.checks.push_back({"docker socket", Probe::Status::kMissing, "/run/docker.sock: no such file",
                           "no Docker daemon answered /_ping", "start the daemon"});
  report.backends["native"] = {true, "user namespaces work"};
  report.backends["docker"] = {false, "not running"};

  nlohmann::json j = ReportToJson(report);
  ASSERT_EQ(j["checks"].size(), 2u);
  EXPECT_EQ(j["checks"][1]["status"], "missing");
  EXPECT_EQ(j["checks"][1]["fix"], "start the daemon");
  EXPECT_EQ(j["backends"]["native"]["usable"], true);
  EXPECT_EQ(j["backends"]["docker"]["usable"], false);

  std::string table = FormatReportTable(report);
  EXPECT_NE(table.find("landlock"), std::string::npos);
  EXPECT_NE(table.find("fix: start the daemon"), std::string::npos);
  EXPECT_EQ(table.find("fix: \n"), std::string::npos);  // ok checks get no fix line
  EXPECT_NE(table.find("native  yes"), std::string::npos);
}

}  // namespace
}  // namespace mcpcell::doctor
