#include "cell/native/cgroup_parse.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace mcpcell {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// mountinfo escapes space, tab, newline and backslash as \ooo octal (proc(5)).
std::string UnescapeOctal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    bool octal = s[i] == '\\' && i + 3 < s.size();
    if (octal) {
      octal = std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                          s.begin() + static_cast<std::ptrdiff_t>(i) + 4,
                          [](char c) { return c >= '0' && c <= '7'; });
    }
    if (octal) {
      int v = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
      out.push_back(static_cast<char>(v));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

template <typename T>
std::optional<T> ParseNumber(std::string_view s) {
  T v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<ProcCgroupEntry> ParseProcCgroup(std::string_view text) {
  std::vector<ProcCgroupEntry> out;
  for (std::string_view line : Lines(text)) {
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    auto id = ParseNumber<int>(line.substr(0, c1));
    if (!id) continue;
    ProcCgroupEntry e;
    e.hierarchy_id = *id;
    std::string_view list = line.substr(c1 + 1, c2 - c1 - 1);
    if (!list.empty()) {
      for (std::string_view c : Split(list, ',')) e.controllers.emplace_back(c);
    }
    // The path is the rest of the line: it may itself contain ':'.
    e.path = std::string(line.substr(c2 + 1));
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::string> UnifiedCgroupPath(const std::vector<ProcCgroupEntry>& entries) {
  for (const auto& e : entries) {
    if (e.hierarchy_id == 0 && e.controllers.empty()) return e.path;
  }
  return std::nullopt;
}

std::optional<std::string> V1CgroupPath(const std::vector<ProcCgroupEntry>& entries,
                                        std::string_view controller) {
  for (const auto& e : entries) {
    if (e.hierarchy_id == 0) continue;
    if (std::find(e.controllers.begin(), e.controllers.end(), controller) != e.controllers.end()) {
      return e.path;
    }
  }
  return std::nullopt;
}

bool CgroupMount::HasController(std::string_view name) const {
  return std::find(controllers.begin(), controllers.end(), name) != controllers.end();
}

std::optional<CgroupMount> ParseCgroupMountLine(std::string_view line) {
  // "36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:1 - cgroup cgroup rw,memory"
  std::vector<std::string_view> f;
  for (std::string_view w : Split(line, ' ')) {
    if (!w.empty()) f.push_back(w);
  }
  auto dash = std::find(f.begin(), f.end(), std::string_view("-"));
  if (f.size() < 6 || dash == f.end() || f.end() - dash < 3 || dash - f.begin() < 6) {
    return std::nullopt;
  }
  std::string_view fstype = dash[1];
  if (fstype != "cgroup" && fstype != "cgroup2") return std::nullopt;
  CgroupMount m;
  m.root = UnescapeOctal(f[3]);
  m.mount_point = UnescapeOctal(f[4]);
  m.v2 = fstype == "cgroup2";
  if (!m.v2) {
    // Super options name the controllers ("rw,cpu,cpuacct"); others such as
    // "rw" or "name=systemd" never match a controller we look up.
    for (std::string_view o : Split(dash[3], ',')) {
      if (o != "rw" && o != "ro") m.controllers.emplace_back(o);
    }
  }
  return m;
}

std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo) {
  std::vector<CgroupMount> out;
  for (std::string_view line : Lines(mountinfo)) {
    if (auto m = ParseCgroupMountLine(line)) out.push_back(std::move(*m));
  }
  return out;
}

std::optional<std::string> CgroupDirUnder(const CgroupMount& mount, const std::string& path) {
  std::string rel;
  if (mount.root == "/") {
    rel = path;
  } else if (path == mount.root) {
    rel = "/";
  } else if (path.rfind(mount.root + "/", 0) == 0) {
    rel = path.substr(mount.root.size());
  } else {
    return std::nullopt;
  }
  if (rel.empty() || rel == "/") return mount.mount_point;
  return mount.mount_point + rel;
}

std::uint64_t CpuQuotaMicros(double cpus, std::uint64_t period_us) {
  double q = std::round(cpus * static_cast<double>(period_us));
  if (!(q >= 1000.0)) return 1000;  // also catches NaN and negatives
  return static_cast<std::uint64_t>(q);
}

std::string FormatCpuMax(double cpus, std::uint64_t period_us) {
  return fmt::format("{} {}", CpuQuotaMicros(cpus, period_us), period_us);
}

std::optional<pid_t> SupervisorPidFromCellId(std::string_view name) {
  constexpr std::string_view kPrefix = "mcpcell-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  size_t dash = name.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view hex = name.substr(dash + 1);
  if (hex.size() != 8 || !std::all_of(hex.begin(), hex.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      })) {
    return std::nullopt;
  }
  auto pid = ParseNumber<pid_t>(name.substr(0, dash));
  if (!pid || *pid <= 0) return std::nullopt;
  return pid;
}

std::string FormatCellId(pid_t supervisor, std::uint32_t random) {
  return fmt::format("mcpcell-{}-{:08x}", supervisor, random);
}

}  // namespace mcpcell
