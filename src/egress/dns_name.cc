#include "egress/dns_name.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fmt/format.h>

namespace mcpcell {
namespace {

constexpr std::size_t kMaxLabel = 63;   // RFC 1035 section 2.3.4
constexpr std::size_t kMaxName = 253;   // 255 on the wire, less the first length byte and the root label

bool IsLetterOrDigit(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/// Sets `*why` and returns nullopt, so a refusal is one statement.
std::nullopt_t Refuse(std::string* why, std::string reason) {
  if (why != nullptr) *why = "not a valid DNS name: " + std::move(reason);
  return std::nullopt;
}

/// What an unacceptable byte is, for the message.
std::string DescribeByte(unsigned char c, std::size_t offset) {
  if (c == 0) return fmt::format("NUL byte at offset {}", offset);
  if (c == ' ') return fmt::format("space at offset {}", offset);
  if (c < 0x20 || c == 0x7f) return fmt::format("control byte 0x{:02x} at offset {}", c, offset);
  if (c >= 0x80) {
    return fmt::format("non-ASCII byte 0x{:02x} at offset {} (write an internationalised name in its "
                       "xn-- punycode form)", c, offset);
  }
  std::string what = fmt::format("'{}' at offset {}", static_cast<char>(c), offset);
  if (c == '@') what += " (user information is not accepted)";
  if (c == '%') what += " (percent-encoding and IPv6 zone ids are not accepted)";
  if (c == '_') what += " (host names have letters, digits and '-' only)";
  return what;
}

/// IPv6 literal → RFC 5952 text; nullopt if it is not one. inet_pton(3)
/// refuses zone ids ("fe80::1%eth0"), which Boost's parser would accept.
std::optional<std::string> CanonicalV6(std::string_view text) {
  if (text.size() > INET6_ADDRSTRLEN) return std::nullopt;
  std::string s(text);
  in6_addr a{};
  if (::inet_pton(AF_INET6, s.c_str(), &a) != 1) return std::nullopt;
  char out[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(AF_INET6, &a, out, sizeof out) == nullptr) return std::nullopt;
  return std::string(out);
}

/// Checks the labels of `name` (no trailing dot); lowers it in place. False
/// (with `*why`) on the first problem.
bool CheckLabels(std::string& name, std::string* why) {
  auto fail = [why](std::string reason) {
    Refuse(why, std::move(reason));
    return false;
  };
  std::size_t start = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && name[i] != '.') {
      auto c = static_cast<unsigned char>(name[i]);
      if (c >= 'A' && c <= 'Z') name[i] = static_cast<char>(c - 'A' + 'a');
      else if (!IsLetterOrDigit(c) && c != '-') return fail(DescribeByte(c, i));
      continue;
    }
    std::size_t len = i - start;
    if (len == 0) return fail(fmt::format("empty label at offset {}", start));
    if (len > kMaxLabel) {
      return fail(fmt::format("label of {} bytes at offset {} (at most {})", len, start, kMaxLabel));
    }
    if (name[start] == '-' || name[i - 1] == '-') {
      return fail(fmt::format("label at offset {} starts or ends with '-'", start));
    }
    start = i + 1;
  }
  return true;
}

bool AllDigits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return !s.empty();
}

/// A name glibc's inet_aton(3) (and so getaddrinfo(3)) reads as an IPv4
/// address although inet_pton(3) does not: "0x7f.1", "2130706433",
/// "017700000001", "127.1". Named with what it would become.
std::optional<std::string> LenientV4(const std::string& name) {
  in_addr a{};
  if (::inet_aton(name.c_str(), &a) == 0) return std::nullopt;
  char out[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, out, sizeof out);
  return std::string(out);
}

}  // namespace

std::optional<std::string> CanonicalHost(std::string_view bytes, std::string* why) {
  if (bytes.empty()) return Refuse(why, "empty name");
  // An IPv6 literal, bracketed (URL authority) or bare (SOCKS5, Host-less forms).
  std::string_view inner = bytes;
  bool bracketed = inner.size() >= 2 && inner.front() == '[' && inner.back() == ']';
  if (bracketed) inner = inner.substr(1, inner.size() - 2);
  if (inner.find(':') != std::string_view::npos || bracketed) {
    // Bytes first: inet_pton(3) reads a C string and would stop at a NUL.
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      auto c = static_cast<unsigned char>(bytes[i]);
      if (c < 0x21 || c >= 0x7f) return Refuse(why, DescribeByte(c, i));
    }
    if (auto pct = inner.find('%'); pct != std::string_view::npos) {
      return Refuse(why, fmt::format("IPv6 zone id at offset {} (not accepted)", pct + (bracketed ? 1 : 0)));
    }
    if (auto v6 = CanonicalV6(inner)) return v6;
    return Refuse(why, "not an IPv6 address, and ':' has no place in a host name");
  }
  if (bytes.size() > kMaxName + 1) {
    return Refuse(why, fmt::format("name of {} bytes (at most {})", bytes.size(), kMaxName));
  }
  std::string name(bytes);
  if (name.back() == '.') name.pop_back();
  if (!CheckLabels(name, why)) return std::nullopt;
  if (name.size() > kMaxName) {
    return Refuse(why, fmt::format("name of {} bytes (at most {})", name.size(), kMaxName));
  }
  in_addr strict{};
  if (::inet_pton(AF_INET, name.c_str(), &strict) == 1) return name;
  if (auto lenient = LenientV4(name)) {
    return Refuse(why, fmt::format("\"{}\" is the IPv4 address {} to libc; write it as {}", name, *lenient,
                                   *lenient));
  }
  std::string_view last(name);
  if (auto dot = last.rfind('.'); dot != std::string_view::npos) last.remove_prefix(dot + 1);
  if (AllDigits(last)) {
    return Refuse(why, fmt::format("the last label \"{}\" is all digits (no top-level domain is)", last));
  }
  return name;
}

std::optional<std::string> CanonicalWireName(const std::uint8_t* wire, std::size_t size, std::string* why) {
  std::string dotted;
  std::size_t at = 0;
  for (;;) {
    if (at >= size) return Refuse(why, "the name ends before its root label");
    std::size_t len = wire[at];
    if (len == 0) break;
    if (len > kMaxLabel) {
      return Refuse(why, fmt::format("label of {} bytes at offset {} (at most {})", len, dotted.size(), kMaxLabel));
    }
    if (at + 1 + len > size) return Refuse(why, "a label runs past the end of the name");
    std::string_view label(reinterpret_cast<const char*>(wire + at + 1), len);
    // A '.' inside a label would become a label boundary once joined.
    if (auto dot = label.find('.'); dot != std::string_view::npos) {
      return Refuse(why, fmt::format("'.' byte inside the label at offset {}", dotted.size() + dot));
    }
    if (!dotted.empty()) dotted += '.';
    dotted += label;
    at += 1 + len;
  }
  if (dotted.empty()) return std::string(".");
  return CanonicalHost(dotted, why);
}

std::string PrintableBytes(std::string_view bytes, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  for (; i < bytes.size() && out.size() < max_bytes; ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < bytes.size()) out += fmt::format("...({} more bytes)", bytes.size() - i);
  return out;
}

}  // namespace mcpcell
