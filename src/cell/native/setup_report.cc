#include "cell/native/setup_report.h"

#include <sys/socket.h>

#include <nlohmann/json.hpp>
#include <string>

namespace mcpcell {

void SendSetupError(int fd, const Error& error) {
  std::string msg =
      nlohmann::json{{"step", error.what}, {"path", error.path}, {"errno", error.err}, {"detail", error.detail}}
          .dump();
  // MSG_NOSIGNAL: a vanished supervisor must not kill us with SIGPIPE mid-report.
  (void)::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
}

std::optional<Error> AwaitSetupResult(int fd) {
  std::optional<Error> first;
  char buf[8192];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (first) continue;
    auto j = nlohmann::json::parse(std::string(buf, static_cast<std::size_t>(n)), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      first = MakeError("cell setup", "", "unreadable report from the cell");
      continue;
    }
    first = Error{j.value("step", std::string("cell setup")), j.value("path", std::string()),
                  j.value("errno", 0), j.value("detail", std::string())};
  }
  return first;
}

}  // namespace mcpcell
