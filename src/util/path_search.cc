#include "util/path_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "util/root_only_file.h"

namespace mcpcell {

namespace {
constexpr const char* kSystemProgramDirs[] = {"/usr/", "/bin/", "/sbin/", "/opt/", "/nix/store/"};
}  // namespace

bool IsExecutableFile(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string SearchPath(const std::string& name, std::string_view path_value) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return IsExecutableFile(name) ? name : std::string();
  while (true) {
    std::size_t colon = path_value.find(':');
    std::string_view dir = path_value.substr(0, colon);
    // execvp(3): "" is the current directory; glibc then tries plain `name`.
    std::string candidate = dir.empty() ? "./" + name : std::string(dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    if (colon == std::string_view::npos) return {};
    path_value.remove_prefix(colon + 1);
  }
}

std::string RealPathOf(const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  return ec ? path : real.string();
}

std::string FindOnHostPath(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string found = SearchPath(name, env != nullptr ? env : kDefaultHostPath);
  if (found.empty()) return {};
  std::error_code ec;
  auto abs = std::filesystem::absolute(found, ec);
  return ec ? found : abs.lexically_normal().string();
}

bool IsSystemProgram(const std::string& path) {
  return IsRootOnlyFile(path, RootPlaces{.dirs = kSystemProgramDirs, .files = {}});
}

std::string FindOnAbsoluteHostPath(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string_view value = env != nullptr ? env : kDefaultHostPath;
  std::string absolute;
  for (std::size_t at = 0; at <= value.size();) {
    std::size_t colon = std::min(value.find(':', at), value.size());
    std::string_view dir = value.substr(at, colon - at);
    if (!dir.empty() && dir[0] == '/') absolute += (absolute.empty() ? "" : ":") + std::string(dir);
    at = colon + 1;
  }
  if (absolute.empty()) return {};
  std::string found = SearchPath(name, absolute);
  return found.empty() ? found : std::filesystem::path(found).lexically_normal().string();
}

}  // namespace mcpcell
