// SetUpCellNet in a real (unprivileged) user + network namespace: a forked
// child enters new namespaces, sets the cell's network up, and probes it the
// way a server would; it reports what it saw on a pipe and the test checks it.
#include "egress/cell_net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

using Report = std::map<std::string, std::string>;

void Put(int fd, const std::string& key, const std::string& value) {
  std::string line = key + "=" + value + "\n";
  (void)!::write(fd, line.data(), line.size());
}

bool WriteFileAt(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::string Errno(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENETUNREACH: return "ENETUNREACH";
    case ECONNREFUSED: return "ECONNREFUSED";
    default: return std::to_string(err);
  }
}

sockaddr_in V4(const char* addr, std::uint16_t port) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  ::inet_pton(AF_INET, addr, &sin.sin_addr);
  return sin;
}

std::string Format(const sockaddr_in& sin) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &sin.sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(sin.sin_port));
}

std::string LocalName(int fd) {
  sockaddr_in sin{};
  socklen_t len = sizeof sin;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0) return "error";
  return Format(sin);
}

// A TCP connect to an address outside the cell: lands on the proxy listener,
// and SO_ORIGINAL_DST on the accepted socket names where it was going.
void ProbeTcpRedirect(int out, const EgressSockets& s, const char* address = "203.0.113.9", std::uint16_t port = 443,
                      const std::string& key = "") {
  int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in dst = V4(address, port);
  if (::connect(c, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    Put(out, key + "tcp_connect", Errno(errno));
    return;
  }
  Put(out, key + "tcp_connect", "ok");
  int a = ::accept4(s.proxy_listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
  sockaddr_in orig{};
  socklen_t len = sizeof orig;
  if (a < 0 || ::getsockopt(a, SOL_IP, SO_ORIGINAL_DST, &orig, &len) != 0) {
    Put(out, key + "original_dst", "error " + Errno(errno));
  } else {
    Put(out, key + "original_dst", Format(orig));
  }
}

// UDP to port 53 of any resolver reaches the DNS stub's socket; the reply
// comes back from the address the client asked.
void ProbeDnsRedirect(int out, const EgressSockets& s) {
  int u = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in resolver = V4("8.8.8.8", 53);
  if (::sendto(u, "q1", 2, 0, reinterpret_cast<sockaddr*>(&resolver), sizeof resolver) != 2) {
    Put(out, "dns_send", Errno(errno));
    return;
  }
  char buf[16] = {};
  sockaddr_in from{};
  socklen_t len = sizeof from;
  ssize_t n = ::recvfrom(s.dns_socket.get(), buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
  Put(out, "dns_stub_got", n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "nothing");
  (void)::sendto(s.dns_socket.get(), "r1", 2, 0, reinterpret_cast<sockaddr*>(&from), len);
  sockaddr_in reply_from{};
  len = sizeof reply_from;
  n = ::recvfrom(u, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&reply_from), &len);
  Put(out, "dns_reply_from", n > 0 ? Format(reply_from) : "nothing");
}

// Everything else has nowhere to go.
void ProbeDenied(int out) {
  int u = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in other = V4("203.0.113.9", 9999);
  bool sent = ::sendto(u, "x", 1, 0, reinterpret_cast<sockaddr*>(&other), sizeof other) == 1;
  Put(out, "udp_other", sent ? "sent" : Errno(errno));
  int v6 = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(443);
  ::inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr);
  bool connected = ::connect(v6, reinterpret_cast<sockaddr*>(&sin6), sizeof sin6) == 0;
  Put(out, "ipv6_connect", connected ? "connected" : Errno(errno));
}

[[noreturn]] void Child(int out, bool host_port) {
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    Put(out, "skip", std::string("unshare(CLONE_NEWUSER|CLONE_NEWNET): ") + std::strerror(errno));
    ::_exit(0);
  }
  (void)WriteFileAt("/proc/self/setgroups", "deny");
  (void)WriteFileAt("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1");
  (void)WriteFileAt("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
  auto sockets = host_port ? SetUpCellNet({5432}) : SetUpCellNet();
  if (!sockets) {
    Put(out, "setup", sockets.error().Message());
    ::_exit(0);
  }
  Put(out, "setup", "ok");
  Put(out, "proxy_listener", LocalName(sockets->proxy_listener.get()));
  Put(out, "dns_socket", LocalName(sockets->dns_socket.get()));
  if (host_port) {
    // The named host loopback port lands on the proxy; another port and
    // 127.0.0.2 stay on the cell's own loopback (nothing listens: refused).
    ProbeTcpRedirect(out, *sockets, "127.0.0.1", 5432, "named_");
    ProbeTcpRedirect(out, *sockets, "127.0.0.1", 5433, "other_");
    ProbeTcpRedirect(out, *sockets, "127.0.0.2", 5432, "other_address_");
    ::_exit(0);
  }
  ProbeTcpRedirect(out, *sockets);
  ProbeDnsRedirect(out, *sockets);
  ProbeDenied(out);
  ::_exit(0);
}

Report RunInNewNamespaces(bool host_port = false) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    Child(p[1], host_port);
  }
  ::close(p[1]);
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  Report r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) r[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return r;
}

TEST(CellNet, EveryOutboundTcpConnectLandsOnTheProxyListenerWithItsOriginalDestination) {
  Report r = RunInNewNamespaces();
  if (r.count("skip")) GTEST_SKIP() << "no unprivileged user+network namespaces here: " << r["skip"];
  ASSERT_EQ(r["setup"], "ok");
  EXPECT_EQ(r["proxy_listener"], "127.0.0.1:3128");
  EXPECT_EQ(r["dns_socket"], "127.0.0.53:53");
  EXPECT_EQ(r["tcp_connect"], "ok");
  EXPECT_EQ(r["original_dst"], "203.0.113.9:443");
  EXPECT_EQ(r["dns_stub_got"], "q1");
  EXPECT_EQ(r["dns_reply_from"], "8.8.8.8:53");
  EXPECT_EQ(r["udp_other"], "EPERM");
  EXPECT_EQ(r["ipv6_connect"], "ENETUNREACH");
}

// Issue 14 item 3: `--allow-host localhost:5432`.
TEST(CellNet, ANamedHostLoopbackPortIsRedirectedToTheProxyAndNothingElseOnLoopback) {
  Report r = RunInNewNamespaces(true);
  if (r.count("skip")) GTEST_SKIP() << "no unprivileged user+network namespaces here: " << r["skip"];
  ASSERT_EQ(r["setup"], "ok");
  EXPECT_EQ(r["named_tcp_connect"], "ok");
  EXPECT_EQ(r["named_original_dst"], "127.0.0.1:5432");
  EXPECT_EQ(r["other_tcp_connect"], "ECONNREFUSED");
  EXPECT_EQ(r["other_address_tcp_connect"], "ECONNREFUSED");
  std::string rules = CellNftRuleset({5432, 6379});
  auto named = rules.find("ip daddr 127.0.0.1 tcp dport { 5432, 6379 } redirect to :3128");
  ASSERT_NE(named, std::string::npos) << rules;
  EXPECT_LT(named, rules.find("ip daddr != 127.0.0.0/8")) << rules;
  EXPECT_EQ(CellNftRuleset().find("127.0.0.1 tcp dport"), std::string::npos);
}

TEST(CellNet, RulesetRedirectsTcpAndDnsAndDropsTheRest) {
  std::string rules = CellNftRuleset();
  EXPECT_NE(rules.find("ip daddr != 127.0.0.0/8 meta l4proto tcp redirect to :3128"), std::string::npos) << rules;
  EXPECT_NE(rules.find("udp dport 53 dnat to 127.0.0.53:53"), std::string::npos) << rules;
  EXPECT_NE(rules.find("drop"), std::string::npos) << rules;
  EXPECT_EQ(CellProxyUrl(), "http://127.0.0.1:3128");
}

}  // namespace
}  // namespace mcpcell
