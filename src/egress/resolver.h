#pragma once
// How the proxy turns a name into addresses: a --resolve pin wins (like
// curl's --resolve, it is how a user or a test points a name at a chosen
// address); an IP literal is itself; anything else goes to getaddrinfo(3)
// through Asio's resolver, which runs it on its own background thread so the
// proxy's event loop never blocks on DNS.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>  // before asio's awaitable.hpp, which uses std::exchange without it (Boost 1.74)
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>

#include "core/cell_spec.h"
#include "util/error.h"

namespace mcpcell {

/// Parses a --resolve flag value "HOST:PORT:ADDRESS": PORT is 1-65535 or "*"
/// (every port), ADDRESS a numeric IPv4 or IPv6 address (brackets allowed).
/// The host is normalised (lower case, no trailing dot). Errors say which part
/// is wrong and show the expected form.
Result<ResolvePin> ParseResolvePin(std::string_view value);

/// The addresses a name stands for, and where they came from.
struct Resolution {
  std::vector<boost::asio::ip::address> addresses;
  bool pinned = false;   ///< from a --resolve pin: named explicitly by the user
  std::string error;     ///< non-empty when resolution failed ("name not found: ...")
};

class Resolver {
 public:
  explicit Resolver(std::vector<ResolvePin> pins) : pins_(std::move(pins)) {}

  /// The pinned address for `host` (normalised) and `port`, if a pin covers it.
  std::optional<boost::asio::ip::address> Pinned(const std::string& host, std::uint16_t port) const;

  /// What needs no lookup: the pin for `host` and `port`, or the address an
  /// IP literal is. nullopt: ask Resolve (DNS).
  std::optional<Resolution> ResolveNow(const std::string& host, std::uint16_t port) const;

  /// Resolves `host` for a TCP connection to `port`: pin, IP literal, or DNS.
  /// Never throws; a failure is in Resolution::error.
  boost::asio::awaitable<Resolution> Resolve(std::string host, std::uint16_t port) const;

 private:
  std::vector<ResolvePin> pins_;
};

}  // namespace mcpcell
