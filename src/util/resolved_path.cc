#include "util/resolved_path.h"

#include <climits>
#include <cstdlib>
#include <filesystem>

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

std::string WithoutTrailingSlash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

std::string ResolvedAsFarAsExists(const std::string& path) {
  // Strip components of the path as written (no normalization first: that
  // would take "link/.." for the link's own parent) until a prefix resolves.
  std::string prefix = WithoutTrailingSlash(path);
  std::string rest;
  while (!prefix.empty()) {
    char buf[PATH_MAX];
    if (::realpath(prefix.c_str(), buf) != nullptr) {
      fs::path out = rest.empty() ? fs::path(buf) : (fs::path(buf) / rest).lexically_normal();
      return WithoutTrailingSlash(out.string());
    }
    std::size_t slash = prefix.find_last_of('/');
    if (slash == std::string::npos) break;
    std::string last = prefix.substr(slash + 1);
    rest = rest.empty() ? last : last + "/" + rest;
    prefix = slash == 0 ? "/" : WithoutTrailingSlash(prefix.substr(0, slash));
  }
  return WithoutTrailingSlash(fs::path(path).lexically_normal().string());
}

bool HasControlByte(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

}  // namespace mcpcell
