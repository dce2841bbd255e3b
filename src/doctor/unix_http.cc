#include "doctor/unix_http.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "util/unique_fd.h"

namespace mcpcell::doctor {
namespace {

constexpr size_t kMaxAnswer = 8u << 20;  // /info is a few KiB; refuse to buffer without bound

// A response whose length is known (Content-Length or chunked) can be complete
// before the peer closes a keep-alive connection; any other runs to EOF.
bool Complete(const std::string& raw) {
  auto r = ParseHttpResponse(raw);
  if (!r) return false;
  return r->headers.count("content-length") != 0 || r->headers.count("transfer-encoding") != 0;
}

}  // namespace

Result<HttpResponse> UnixHttpRequest(const std::string& path, const std::string& request,
                                     std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return ErrnoError("connect", path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket(AF_UNIX)", path);
  // On AF_UNIX, SO_SNDTIMEO also bounds a connect that waits for a full backlog (unix(7)).
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return ErrnoError("connect", path);
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("send request", path);
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  char buf[16384];
  while (raw.size() < kMaxAnswer && !Complete(raw)) {
    ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read answer", path);
    if (n == 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  auto response = ParseHttpResponse(raw);
  if (!response) {
    return MakeError("read answer", path,
                     raw.empty() ? "closed without answering" : "not an HTTP response");
  }
  return *response;
}

}  // namespace mcpcell::doctor
