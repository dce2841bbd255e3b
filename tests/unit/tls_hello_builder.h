#pragma once
// Builds TLS ClientHello records for tests of the egress proxy's
// server-name gate (egress/tls_client_hello.h): the framing only, as
// RFC 8446 4.1.2 and RFC 6066 3 lay it out.

#include <cstdint>
#include <string>
#include <vector>

namespace mcpcell::test_tls {

inline std::string Be(std::size_t value, int width) {
  std::string out;
  for (int i = width - 1; i >= 0; --i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}
inline std::string Vec(const std::string& body, int width) { return Be(body.size(), width) + body; }

inline std::string ServerNameExt(const std::vector<std::string>& names, int type = 0) {
  std::string list;
  for (const auto& n : names) list += std::string(1, static_cast<char>(type)) + Vec(n, 2);
  return Be(0, 2) + Vec(Vec(list, 2), 2);
}

/// A ClientHello in one record, with the given extensions block (or none).
inline std::string Hello(const std::string& extensions, bool with_extensions = true) {
  std::string body = Be(0x0303, 2) + std::string(32, 'r') + Vec("", 1) + Vec(Be(0x1301, 2), 2) + Vec(std::string(1, '\0'), 1);
  if (with_extensions) body += Vec(extensions, 2);
  std::string handshake = std::string(1, '\x01') + Vec(body, 3);
  return std::string(1, '\x16') + Be(0x0301, 2) + Vec(handshake, 2);
}

inline std::string Other(std::uint16_t type, const std::string& body) { return Be(type, 2) + Vec(body, 2); }

}  // namespace mcpcell::test_tls
