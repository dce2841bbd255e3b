// The doctor's parsers, fed with sample file contents from real machines.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "doctor/parse.h"
#include "doctor/probe.h"
#include "doctor/unix_http.h"
#include "util/unique_fd.h"

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

// A listening unix socket in a fresh temp dir; removed with the dir.
class UnixServer {
 public:
  explicit UnixServer(bool listen) {
    char tmpl[] = "/tmp/doctor-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    path_ = dir_ + "/engine.sock";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    bound_ = ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
             (!listen || ::listen(fd_.get(), 4) == 0);
    if (!listen) fd_.reset();  // the file stays, nobody listens: connect is refused
  }
  ~UnixServer() {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }
  bool bound() const { return bound_; }
  /// Answers one request with `answer`, then keeps the connection open until the peer closes.
  std::thread ServeOnce(std::string answer) {
    return std::thread([this, answer] {
      UniqueFd c(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      std::string request;
      char buf[1024];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
        if (n <= 0) return;
        request.append(buf, static_cast<size_t>(n));
      }
      (void)!::send(c.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
      while (::recv(c.get(), buf, sizeof buf, 0) > 0) {
      }
    });
  }

 private:
  std::string dir_, path_;
  UniqueFd fd_;
  bool bound_ = false;
};

TEST(UnixHttpRequest, StopsAtContentLengthOnKeepAlive) {
  UnixServer server(/*listen=*/true);
  ASSERT_TRUE(server.bound());
  // The server holds the connection open: waiting for EOF would end in the timeout error.
  std::thread t = server.ServeOnce("HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK");
  auto r = UnixHttpRequest(server.path(), "GET /_ping HTTP/1.1\r\nHost: d\r\n\r\n", std::chrono::seconds(30));
  t.join();
  ASSERT_TRUE(r.ok()) << r.error().Message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "OK");
  EXPECT_EQ(r->headers.at("api-version"), "1.41");
}

TEST(UnixHttpRequest, NamesWhyItFailed) {
  auto missing = UnixHttpRequest("/nonexistent/docker.sock", "GET /_ping HTTP/1.1\r\n\r\n", std::chrono::seconds(1));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().err, ENOENT);
  EXPECT_EQ(missing.error().path, "/nonexistent/docker.sock");

  UnixServer dead(/*listen=*/false);
  ASSERT_TRUE(dead.bound());
  auto refused = UnixHttpRequest(dead.path(), "GET /_ping HTTP/1.1\r\n\r\n", std::chrono::seconds(1));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().err, ECONNREFUSED);

  UnixServer garbage(/*listen=*/true);
  ASSERT_TRUE(garbage.bound());
  std::thread t = garbage.ServeOnce("SSH-2.0-OpenSSH_9.2\r\n\r\n");
  // Not HTTP and the server never closes: the answer can only end by the timeout.
  auto bad = UnixHttpRequest(garbage.path(), "GET /_ping HTTP/1.1\r\n\r\n", std::chrono::milliseconds(200));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().err, EAGAIN);
  t.join();
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
