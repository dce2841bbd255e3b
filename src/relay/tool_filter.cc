#include "relay/tool_filter.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mcpcell {

namespace {

// "a.b.c.d", each 0-255 without leading zeros: the one IPv4 form kept as written.
bool DottedQuad(std::string_view h) {
  int parts = 0;
  while (true) {
    std::size_t dot = h.find('.');
    std::string_view p = h.substr(0, dot);
    if (p.empty() || p.size() > 3 || (p.size() > 1 && p[0] == '0') || !std::all_of(p.begin(), p.end(), ::isdigit)) return false;
    if (std::stoi(std::string(p)) > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    h.remove_prefix(dot + 1);
  }
  return parts == 4;
}

// What a WHATWG URL parser rewrites in a special scheme's URI (URL
// Standard, "special scheme"; the SDK's McpServer looks resources up by
// `new URL(uri).toString()`): "file:/x" and "http:host/x" gain their "//",
// file's "localhost" host becomes empty, the host is IDNA-mapped (fullwidth
// letters, numeric IPv4 forms), a default or zero-padded port is dropped.
// The globs would judge one spelling and the server read another; only the
// spelling the parser keeps is decidable. A userinfo, a host's trailing dot
// and an empty path segment name the same host or file to servers that
// fetch or open what they are given.
std::optional<std::string> UncanonicalAuthority(std::string_view u) {
  std::size_t colon = u.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string scheme(u.substr(0, colon));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::map<std::string, std::string_view> kDefaultPort = {
      {"http", "80"}, {"https", "443"}, {"ws", "80"}, {"wss", "443"}, {"ftp", "21"}, {"file", ""}};
  auto special = kDefaultPort.find(scheme);
  std::string_view rest = u.substr(colon + 1);
  if (special == kDefaultPort.end()) {
    if (!rest.starts_with("//")) return std::nullopt;
  } else if (!rest.starts_with("//")) {
    return "a " + scheme + ": URI without \"//\"";
  }
  std::string_view authority = rest.substr(2, rest.find_first_of("/?#", 2) - 2);
  std::string_view path = rest.substr(2 + authority.size());
  path = path.substr(0, path.find_first_of("?#"));
  if (path.find("//") != std::string_view::npos) return "an empty path segment";
  // Any scheme's authority: "test://@x/" and "test://x:/" are read as "test://x/".
  if (authority.find('@') != std::string_view::npos) return "a userinfo";
  std::size_t port_at = authority.starts_with('[') ? authority.find("]:") : authority.rfind(':');
  if (authority.starts_with('[') && port_at != std::string_view::npos) ++port_at;
  std::string_view host = authority.substr(0, port_at);
  if (port_at != std::string_view::npos) {
    std::string_view port = authority.substr(port_at + 1);
    bool default_port = special != kDefaultPort.end() && port == special->second;
    if (port.empty() || port[0] == '0' || default_port) return "a default, empty or zero-padded port";
  }
  if (special == kDefaultPort.end()) return std::nullopt;
  if (path.empty()) return "an empty path (read as \"/\")";
  if (std::any_of(authority.begin(), authority.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return "a non-ASCII host";
  }
  std::string lower(host);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (scheme == "file" && lower == "localhost") return "the host localhost (a file URI's empty host)";
  if (lower.ends_with('.')) return "a host with a trailing dot";
  // A last label of digits or 0x...: the parser reads the host as an IPv4
  // address ("0x7f.1", "2130706433" are 127.0.0.1); only a plain dotted quad is kept as written.
  std::string_view last = std::string_view(lower).substr(lower.rfind('.') == std::string::npos ? 0 : lower.rfind('.') + 1);
  bool numeric = !last.empty() && (last.starts_with("0x") || std::all_of(last.begin(), last.end(), ::isdigit));
  if (numeric && !lower.starts_with('[') && !DottedQuad(lower)) return "a host the URL parser reads as another IPv4 address";
  return std::nullopt;
}

// What in a resource URI lets the server read another URI than the one the
// globs judged: percent-encoding ("file:///%65tc/passwd"), dot segments
// ("file:///srv/../etc/passwd", RFC 3986 5.2.4) and backslashes (read as '/'
// by WHATWG URL parsers).
std::optional<std::string> UndecidableUri(std::string_view u) {
  if (u.find('%') != std::string_view::npos) return "percent-encoding";
  if (u.find('\\') != std::string_view::npos) return "a backslash";
  // WHATWG URL parsers (the TypeScript SDK's McpServer reads `new URL(uri)`)
  // trim leading and trailing spaces: " test://secret" is read as the URI a
  // deny rule names (adversary pass, tests/e2e/adv_filters.test.mjs).
  if (u.find(' ') != std::string_view::npos) return "a space";
  if (auto why = UncanonicalAuthority(u)) return why;
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
  // A query or fragment is no part of the file a server opens (Node's
  // fileURLToPath drops both): "file:///srv/key?x" is the file a deny rule
  // "file:///srv/key" names (adversary pass, adv_filters.test.mjs).
  std::string base = uri ? n.substr(0, n.find_first_of("?#")) : n;
  for (std::size_t i = 0; i < rules_.deny.size(); ++i) {
    if (::fnmatch(rules_.deny[i].c_str(), n.c_str(), deny_flags) == 0 ||
        ::fnmatch(rules_.deny[i].c_str(), base.c_str(), deny_flags) == 0) {
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
