#include "egress/http_target.h"

#include <charconv>
#include <strings.h>

#include <fmt/format.h>

#include "egress/dns_name.h"

namespace mcpcell {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool IStartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && IEquals(s.substr(0, prefix.size()), prefix);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::nullopt_t Fail(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return std::nullopt;
}

/// "443" → 443; nullopt unless 1-65535 in decimal.
std::optional<std::uint16_t> ParsePort(std::string_view port) {
  unsigned p = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(p);
}

}  // namespace

std::optional<HostPort> ParseAuthority(std::string_view authority, std::uint16_t default_port, std::string* why) {
  // "user:pw@host": refused as a whole, before a ':' in the user part could
  // be taken for the port separator.
  if (auto at = authority.find('@'); at != std::string_view::npos) {
    return Fail(why, fmt::format("not a valid DNS name: '@' at offset {} (user information is not accepted)", at));
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return Fail(why, "'[' without ']' in the host");
    host = authority.substr(0, close + 1);  // brackets kept: CanonicalHost reads them as IPv6
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':' || rest.size() == 1) return Fail(why, "malformed port after ']'");
      port = rest.substr(1);
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return Fail(why, "an IPv6 address in an authority needs brackets: [v6]:port");
    }
    if (port.empty()) return Fail(why, "empty port after ':'");
  }
  std::string name_problem;
  auto name = CanonicalHost(host, &name_problem);
  if (!name) return Fail(why, std::move(name_problem));
  HostPort out{std::move(*name), default_port};
  if (!port.empty()) {
    auto p = ParsePort(port);
    if (!p) return Fail(why, "port \"" + PrintableBytes(port, 16) + "\" is not 1-65535");
    out.port = *p;
  }
  if (out.port == 0) return Fail(why, "no port (expected host:port)");
  return out;
}

std::optional<HttpTarget> ParseHttpTarget(std::string_view target, std::string* why) {
  constexpr std::string_view kScheme = "http://";
  if (!IStartsWith(target, kScheme)) {
    if (IStartsWith(target, "https://")) {
      *why = "https:// URLs must be tunnelled with CONNECT (this proxy does not terminate TLS)";
    } else if (!target.empty() && target.front() == '/') {
      *why = "this is a proxy: the request target must be an absolute http:// URL";
    } else {
      *why = "unsupported request target (only http:// URLs and CONNECT are proxied)";
    }
    return std::nullopt;
  }
  std::string_view rest = target.substr(kScheme.size());
  auto end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string problem;
  auto where = ParseAuthority(authority, 80, &problem);
  if (!where) {
    *why = "the URL's authority \"" + PrintableBytes(authority) + "\": " + problem;
    return std::nullopt;
  }
  HttpTarget out{*where, end == std::string_view::npos ? std::string("/") : std::string(rest.substr(end))};
  if (out.origin_form.front() == '#') out.origin_form = "/";
  if (auto hash = out.origin_form.find('#'); hash != std::string::npos) out.origin_form.resize(hash);
  if (out.origin_form.front() == '?') out.origin_form.insert(0, "/");
  return out;
}

bool HostHeaderMatches(std::string_view host_header, const HostPort& target, std::uint16_t default_port,
                       std::string* why) {
  auto named = ParseAuthority(Trim(host_header), default_port, why);
  return named && named->host == target.host && named->port == target.port;
}

bool IsHopByHop(std::string_view name, std::string_view connection_tokens) {
  for (std::string_view fixed : {"connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"}) {
    if (IEquals(name, fixed)) return true;
  }
  if (IStartsWith(name, "proxy-")) return true;
  while (!connection_tokens.empty()) {
    auto comma = connection_tokens.find(',');
    if (IEquals(Trim(connection_tokens.substr(0, comma)), name)) return true;
    if (comma == std::string_view::npos) break;
    connection_tokens.remove_prefix(comma + 1);
  }
  return false;
}

std::string FormatHostPort(const HostPort& hp) {
  bool v6 = hp.host.find(':') != std::string::npos;
  return (v6 ? "[" + hp.host + "]" : hp.host) + ":" + std::to_string(hp.port);
}

}  // namespace mcpcell
