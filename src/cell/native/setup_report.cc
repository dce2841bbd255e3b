#include "cell/native/setup_report.h"

#include <sys/socket.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "util/json_text.h"

namespace mcpcell {
namespace {

// At most this many fds in one message (the egress sockets are two).
constexpr std::size_t kMaxFds = 8;

// The fds of one SCM_RIGHTS control message, owned. Anything else in the
// control data is ignored (there is nothing else we send).
std::vector<UniqueFd> TakeFds(msghdr& msg) {
  std::vector<UniqueFd> out;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < n; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      out.emplace_back(fd);
    }
  }
  return out;
}

}  // namespace

void SendSetupError(int fd, const Error& error) {
  std::string msg =
      JsonText(nlohmann::json{{"step", error.what}, {"path", error.path}, {"errno", error.err}, {"detail", error.detail}});
  // MSG_NOSIGNAL: a vanished supervisor must not kill us with SIGPIPE mid-report.
  (void)::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
}

Status SendSetupFds(int fd, const std::string& what, std::span<const int> fds) {
  if (fds.empty() || fds.size() > kMaxFds) return MakeError("hand over fds", what, "bad fd count");
  std::string body = JsonText(nlohmann::json{{"fds", what}});
  struct iovec iov{body.data(), body.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)]{};
  struct msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  if (::sendmsg(fd, &msg, MSG_NOSIGNAL) < 0) return ErrnoError("hand over fds to the supervisor", what);
  return {};
}

SetupResult AwaitSetupResult(int fd) {
  SetupResult out;
  char buf[8192];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  for (;;) {
    struct iovec iov{buf, sizeof buf};
    struct msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    // MSG_CMSG_CLOEXEC: the fds must not leak into anything the supervisor
    // starts later (the cgroup janitor, a fallback exec).
    ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    // ECONNRESET: the cell ended with our "cgroup joined" unread (a setup
    // failure before it read it). The kernel reports that once, ahead of
    // what is still queued (unix_release_sock sets sk_err; sock_error clears
    // it): its report is read next.
    if (n < 0 && (errno == EINTR || errno == ECONNRESET)) continue;
    if (n <= 0) break;
    std::vector<UniqueFd> fds = TakeFds(msg);  // owned at once, so they close if unused
    if (out.error) continue;
    auto j = nlohmann::json::parse(std::string(buf, static_cast<std::size_t>(n)), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      out.error = MakeError("cell setup", "", "unreadable report from the cell");
      continue;
    }
    if (j.contains("fds")) {
      if ((msg.msg_flags & MSG_CTRUNC) != 0 || fds.empty()) {
        out.error = MakeError("cell setup", j.value("fds", std::string()), "the cell's fds did not arrive");
        continue;
      }
      out.fds_what = j.value("fds", std::string());
      out.fds = std::move(fds);
      continue;
    }
    out.error = Error{j.value("step", std::string("cell setup")), j.value("path", std::string()),
                      j.value("errno", 0), j.value("detail", std::string())};
  }
  if (out.error) out.fds.clear();
  return out;
}

}  // namespace mcpcell
