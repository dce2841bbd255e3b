// The pure half of SOCKS5 (RFC 1928 sections 3-5): the sizes and contents of
// the client's greeting and request, without I/O, so the fuzz target
// (fuzz/socks5_fuzz.cc) runs exactly what ServeSocks5 (socks5.cc) runs.
#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/address_v6.hpp>

#include "egress/socks5.h"

namespace mcpcell {

namespace {
constexpr std::uint8_t kNoAuth = 0x00;
constexpr std::uint8_t kAtypIPv4 = 0x01, kAtypDomain = 0x03, kAtypIPv6 = 0x04;
}  // namespace

std::size_t Socks5GreetingSize(std::span<const std::uint8_t> head) { return 2 + std::size_t{head[1]}; }

bool Socks5OffersNoAuth(std::span<const std::uint8_t> greeting) {
  for (std::size_t i = 2; i < greeting.size(); ++i) {
    if (greeting[i] == kNoAuth) return true;
  }
  return false;
}

std::size_t Socks5RequestSize(std::span<const std::uint8_t> head) {
  std::uint8_t atyp = head[3];
  std::size_t address_len = atyp == kAtypIPv4 ? 4 : atyp == kAtypIPv6 ? 16 : atyp == kAtypDomain ? 1 + std::size_t{head[4]} : 0;
  return address_len == 0 ? 4 : 4 + address_len + 2;
}

Socks5Request ParseSocks5Request(std::span<const std::uint8_t> request) {
  Socks5Request req;
  req.command = request[1];
  req.atyp = request[3];
  std::size_t size = Socks5RequestSize(request);
  if (size == 4) return req;
  const std::uint8_t* p = request.data() + 4;
  std::size_t address_len = size - 4 - 2;
  if (req.atyp == kAtypIPv4) {
    req.host = boost::asio::ip::address_v4({p[0], p[1], p[2], p[3]}).to_string();
  } else if (req.atyp == kAtypIPv6) {
    boost::asio::ip::address_v6::bytes_type b;
    for (std::size_t i = 0; i < 16; ++i) b[i] = p[i];
    req.host = boost::asio::ip::address_v6(b).to_string();
  } else {
    // The bytes as sent: ServeSocks5 turns them into a DNS name (CanonicalHost)
    // or refuses them, before any rule sees them (a NUL inside is not a name).
    req.host.assign(reinterpret_cast<const char*>(p + 1), p[0]);
  }
  req.port = static_cast<std::uint16_t>((p[address_len] << 8) | p[address_len + 1]);
  return req;
}

}  // namespace mcpcell
