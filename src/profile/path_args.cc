#include "profile/path_args.h"

#include <climits>
#include <cstdlib>
#include <filesystem>

namespace mcpcell {
namespace {

std::string ExpandHome(const std::string& p) {
  if (p != "~" && p.rfind("~/", 0) != 0) return p;
  const char* home = std::getenv("HOME");
  return home != nullptr ? std::string(home) + p.substr(1) : p;
}

// The path with symlinks resolved, or "" when it does not exist.
std::string RealPathOrEmpty(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

// --read accepts HOST:CELL; the host side is what names the directory.
std::string HostSide(const std::string& flag) {
  auto colon = flag.rfind(':');
  if (colon != std::string::npos && colon + 1 < flag.size() && flag[colon + 1] == '/') return flag.substr(0, colon);
  return flag;
}

}  // namespace

bool IsPathArg(const std::string& arg) { return !arg.empty() && arg[0] != '-'; }

std::string ResolvePathArg(const std::string& arg) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(ExpandHome(arg), ec);
  if (ec) return arg;
  std::string out = abs.lexically_normal().string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();  // "dir/." normalizes to "dir/"
  return out;
}

bool NarrowedByRead(const std::string& dir, const std::vector<std::string>& read_flags) {
  std::string real = RealPathOrEmpty(dir);
  if (real.empty()) return false;
  for (const auto& r : read_flags) {
    if (RealPathOrEmpty(ResolvePathArg(HostSide(r))) == real) return true;
  }
  return false;
}

bool HasWritablePathArg(const std::vector<std::string>& args, const std::vector<std::string>& read_flags) {
  for (const auto& a : args) {
    if (IsPathArg(a) && !NarrowedByRead(ResolvePathArg(a), read_flags)) return true;
  }
  return false;
}

}  // namespace mcpcell
