// The doctor's parsers, fed with sample file contents from real machines.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "doctor/parse.h"
#include "doctor/probe.h"

namespace mcpcell::doctor {
namespace {

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
