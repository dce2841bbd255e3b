#include "cell/docker/run_dirs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "util/remove_tree.h"

namespace mcpcell::docker {

Result<RunDir> RunDir::Create(const std::string& parent, const std::string& prefix, const std::string& what) {
  std::string tmpl = parent + "/" + prefix + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return ErrnoError("create " + what, tmpl);
  RunDir dir;
  dir.path_ = std::move(tmpl);
  return dir;
}

void RunDir::Remove() {
  if (path_.empty()) return;
  (void)RemoveTree(path_);
  path_.clear();
}

int ReapDeadRunDirs(const std::string& parent, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(parent, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    // Only our own: a directory owned by another user is theirs to clean.
    struct stat st{};
    // Files too: a container run's seccomp profile is one (ProfileFile in docker_cell.cc).
    if (::lstat(e.path().c_str(), &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) || st.st_uid != ::geteuid()) {
      continue;
    }
    long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    if (RemoveTree(e.path().string())) ++removed;
  }
  return removed;
}

}  // namespace mcpcell::docker
