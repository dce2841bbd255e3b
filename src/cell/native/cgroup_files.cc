#include "cell/native/cgroup_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "util/unique_fd.h"

namespace mcpcell::cgroupfs {

Result<std::string> ReadText(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open", path);
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read", path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

Status WriteText(const std::string& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open for writing", path);
  ssize_t n;
  do {
    n = ::write(fd.get(), text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    Error e = ErrnoError("write", path);
    e.detail = "value \"" + std::string(text) + "\"";
    return e;
  }
  if (static_cast<size_t>(n) != text.size()) {
    return MakeError("short write", path, "value \"" + std::string(text) + "\"");
  }
  return {};
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return {};
  return ErrnoError("mkdir", path);
}

bool HasProcesses(const std::string& dir) {
  auto text = ReadText(Join(dir, "cgroup.procs"));
  return text.ok() && text->find_first_not_of(" \n") != std::string::npos;
}

std::string Join(const std::string& a, const std::string& b) {
  if (!a.empty() && a.back() == '/') return a + b;
  return a + "/" + b;
}

Status RemoveCgroupDir(const std::string& dir) {
  using namespace std::chrono_literals;
  for (int attempt = 0;; ++attempt) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return {};
    if (errno != EBUSY || attempt >= 50) return ErrnoError("remove cgroup", dir);
    std::this_thread::sleep_for(10ms);
  }
}

}  // namespace mcpcell::cgroupfs
