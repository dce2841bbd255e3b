#pragma once
// Blocking IPv4 socket helpers for unit tests that drive a server over
// loopback (the egress proxy's tests): listen, connect with a receive
// timeout (a broken server fails the test instead of hanging it), send all,
// read a delimiter, a count or to EOF.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "util/unique_fd.h"

namespace mcpcell::test_sockets {

inline std::uint16_t PortOf(int fd) {
  sockaddr_in sin{};
  socklen_t len = sizeof sin;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  return ntohs(sin.sin_port);
}

inline UniqueFd ListenOn(const char* address, std::uint16_t port, int backlog = 64) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, address, &sin.sin_addr);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || listen(fd.get(), backlog) != 0) return {};
  return fd;
}

/// A blocking client with a receive timeout, so a broken proxy fails the test
/// instead of hanging it.
inline UniqueFd ConnectTo(const char* address, std::uint16_t port, int timeout_s = 10) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval tv{timeout_s, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, address, &sin.sin_addr);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) return {};
  return fd;
}

inline bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Reads until `delimiter` has arrived (returned included) or EOF/error/timeout.
inline std::string ReadUntil(int fd, std::string_view delimiter) {
  std::string out;
  char c;
  while (out.size() < delimiter.size() || out.compare(out.size() - delimiter.size(), delimiter.size(), delimiter) != 0) {
    if (recv(fd, &c, 1, 0) != 1) break;
    out.push_back(c);
  }
  return out;
}

inline std::string ReadExactly(int fd, std::size_t n) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = recv(fd, out.data() + got, n - got, 0);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(got);
  return out;
}

inline std::string ReadToEof(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t r = recv(fd, buf, sizeof buf, 0);
    if (r <= 0) break;
    out.append(buf, static_cast<std::size_t>(r));
  }
  return out;
}

}  // namespace mcpcell::test_sockets
