#include "egress/http_target.h"

#include <charconv>
#include <strings.h>

#include "egress/host_rules.h"

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

bool ValidHostChars(std::string_view host) {
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '.' || c == '_' || c == ':';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::optional<HostPort> ParseAuthority(std::string_view authority, std::uint16_t default_port) {
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      if (port.empty()) return std::nullopt;
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty() || host.find(':') != std::string_view::npos) return std::nullopt;  // bare IPv6 needs brackets
  }
  if (host.empty() || !ValidHostChars(host)) return std::nullopt;
  HostPort out{NormaliseHost(host), default_port};
  if (!port.empty()) {
    unsigned p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) return std::nullopt;
    out.port = static_cast<std::uint16_t>(p);
  }
  if (out.port == 0 || out.host.empty()) return std::nullopt;
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
  if (authority.find('@') != std::string_view::npos) {
    *why = "user information in the URL authority is not accepted";
    return std::nullopt;
  }
  auto where = ParseAuthority(authority, 80);
  if (!where) {
    *why = "malformed host or port in the URL";
    return std::nullopt;
  }
  HttpTarget out{*where, end == std::string_view::npos ? std::string("/") : std::string(rest.substr(end))};
  if (out.origin_form.front() == '#') out.origin_form = "/";
  if (auto hash = out.origin_form.find('#'); hash != std::string::npos) out.origin_form.resize(hash);
  if (out.origin_form.front() == '?') out.origin_form.insert(0, "/");
  return out;
}

bool HostHeaderMatches(std::string_view host_header, const HostPort& target, std::uint16_t default_port) {
  auto named = ParseAuthority(Trim(host_header), default_port);
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
