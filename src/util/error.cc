#include "util/error.h"

#include <cstring>

namespace mcpcell {

std::string Error::Message() const {
  std::string m = what;
  if (!path.empty()) m += " " + path;
  if (err != 0) {
    m += ": ";
    m += std::strerror(err);
    const char* name = strerrorname_np(err);
    if (name != nullptr) m += std::string(" (") + name + ")";
  }
  if (!detail.empty()) m += (err != 0 ? " — " : ": ") + detail;
  return m;
}

Error ErrnoError(std::string what, std::string path) {
  int e = errno;
  return Error{std::move(what), std::move(path), e, {}};
}

Error MakeError(std::string what, std::string path, std::string detail) {
  return Error{std::move(what), std::move(path), 0, std::move(detail)};
}

}  // namespace mcpcell
