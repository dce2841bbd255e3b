#include "relay/tool_filter.h"

#include <fnmatch.h>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mcpcell {

namespace {

// What in a resource URI lets the server read another URI than the one the
// globs judged: percent-encoding ("file:///%65tc/passwd"), dot segments
// ("file:///srv/../etc/passwd", RFC 3986 5.2.4) and backslashes (read as '/'
// by WHATWG URL parsers).
std::optional<std::string> UndecidableUri(std::string_view u) {
  if (u.find('%') != std::string_view::npos) return "percent-encoding";
  if (u.find('\\') != std::string_view::npos) return "a backslash";
  for (std::size_t at = u.find('/'); at != std::string_view::npos; at = u.find('/', at + 1)) {
    std::string_view seg = u.substr(at + 1, u.find_first_of("/?#", at + 1) - at - 1);
    if (seg == "." || seg == "..") return "a dot segment";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ToolFilter::Denial(std::string_view name) const {
  if (!active()) return std::nullopt;
  std::string n(name);
  // fnmatch reads a C string: "write_file\0x" would be judged as "write_file".
  bool odd = std::any_of(n.begin(), n.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (odd) {
    return fmt::format("{} name {:?} has a control character; mcpcell refuses it while {} has {} rules", rules_.kind,
                       n, rules_.origin, rules_.key);
  }
  bool uri = rules_.kind == "resource";
  if (auto why = uri ? UndecidableUri(n) : std::nullopt) {
    return fmt::format("resource URI \"{}\" has {}, which a server may resolve to a URI the globs do not name; "
                       "mcpcell refuses it while {} has {} rules; send the plain URI",
                       n, *why, rules_.origin, rules_.key);
  }
  // A URI's scheme and host are case-insensitive (RFC 3986 3.1, 3.2.2): a
  // deny rule matches in any case (over-denying a path that differs only in
  // case is the safe side); allow rules match exactly.
  int deny_flags = uri ? FNM_CASEFOLD : 0;
  for (std::size_t i = 0; i < rules_.deny.size(); ++i) {
    if (::fnmatch(rules_.deny[i].c_str(), n.c_str(), deny_flags) == 0) {
      return fmt::format("{} \"{}\" is denied by {}.deny[{}] (\"{}\") in {}; remove that entry to allow it",
                         rules_.kind, n, rules_.key, i, rules_.deny[i], rules_.origin);
    }
  }
  if (rules_.allow.empty()) return std::nullopt;
  for (const auto& glob : rules_.allow) {
    if (::fnmatch(glob.c_str(), n.c_str(), 0) == 0) return std::nullopt;
  }
  return fmt::format("{} \"{}\" matches no entry of {}.allow {} in {}; add it there to allow it", rules_.kind, n,
                     rules_.key, rules_.allow, rules_.origin);
}

}  // namespace mcpcell
