// libFuzzer target: a SOCKS5 client's first bytes to the egress proxy, parsed
// in the order ServeSocks5 (src/egress/socks5.cc) reads them: the greeting
// (Socks5GreetingSize, Socks5OffersNoAuth), then the request
// (Socks5RequestSize, ParseSocks5Request; src/egress/socks5_parse.cc).
#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "egress/dns_name.h"
#include "egress/socks5.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  if (bytes.size() < 2) return 0;
  std::size_t greeting = mcpcell::Socks5GreetingSize(bytes);
  if (bytes.size() < greeting) return 0;
  if (!mcpcell::Socks5OffersNoAuth(bytes.first(greeting))) return 0;
  bytes = bytes.subspan(greeting);
  if (bytes.size() < 5) return 0;
  std::size_t request = mcpcell::Socks5RequestSize(bytes);
  if (request < 4 || request > 4 + 256 + 2) std::abort();  // the largest: a 255-byte name
  if (bytes.size() < request) return 0;
  mcpcell::Socks5Request req = mcpcell::ParseSocks5Request(bytes.first(request));
  if (req.atyp != bytes[3]) std::abort();
  // What ServeSocks5 does next with a domain: the name gate (dns_name_fuzz
  // checks its promises; here, that a parsed request reaches it intact).
  std::string why;
  if (req.atyp == 3 && !mcpcell::CanonicalHost(req.host, &why) && why.empty()) std::abort();
  return 0;
}
