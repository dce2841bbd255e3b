#include "relay/tool_filter.h"

#include <fnmatch.h>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mcpcell {

std::optional<std::string> ToolFilter::Denial(std::string_view name) const {
  if (!active()) return std::nullopt;
  std::string n(name);
  // fnmatch reads a C string: "write_file\0x" would be judged as "write_file".
  bool odd = std::any_of(n.begin(), n.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (odd) {
    return fmt::format("tool name {:?} has a control character; mcpcell refuses it while {} has tool rules", n,
                       rules_.origin);
  }
  for (std::size_t i = 0; i < rules_.deny.size(); ++i) {
    if (::fnmatch(rules_.deny[i].c_str(), n.c_str(), 0) == 0) {
      return fmt::format("tool \"{}\" is denied by mcpcell.tools.deny[{}] (\"{}\") in {}; remove that entry to allow it",
                         n, i, rules_.deny[i], rules_.origin);
    }
  }
  if (rules_.allow.empty()) return std::nullopt;
  for (const auto& glob : rules_.allow) {
    if (::fnmatch(glob.c_str(), n.c_str(), 0) == 0) return std::nullopt;
  }
  return fmt::format("tool \"{}\" matches no entry of mcpcell.tools.allow {} in {}; add it there to allow it", n,
                     rules_.allow, rules_.origin);
}

}  // namespace mcpcell
