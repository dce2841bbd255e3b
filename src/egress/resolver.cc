#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/resolver.h"

#include <charconv>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "egress/dns_name.h"
#include "egress/host_rules.h"

namespace mcpcell {
namespace {

constexpr const char* kPinForm = "expected HOST:PORT:ADDRESS, e.g. api.example.com:443:203.0.113.7 (PORT may be *)";

}  // namespace

Result<ResolvePin> ParseResolvePin(std::string_view value) {
  auto first = value.find(':');
  auto second = first == std::string_view::npos ? first : value.find(':', first + 1);
  if (second == std::string_view::npos) return MakeError("--resolve", std::string(value), kPinForm);
  ResolvePin pin;
  std::string_view port = value.substr(first + 1, second - first - 1);
  std::string_view addr = value.substr(second + 1);
  if (first == 0) return MakeError("--resolve", std::string(value), std::string("empty host; ") + kPinForm);
  // The same gate every name from a cell passes (dns_name.h), so a pin is
  // matched against names in the one canonical form they arrive in.
  std::string why;
  auto host = CanonicalHost(value.substr(0, first), &why);
  if (!host) return MakeError("--resolve", std::string(value), why + "; " + kPinForm);
  pin.host = std::move(*host);
  if (port != "*") {
    unsigned p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) {
      return MakeError("--resolve", std::string(value),
                       fmt::format("port \"{}\" is not 1-65535 or *; {}", port, kPinForm));
    }
    pin.port = static_cast<std::uint16_t>(p);
  }
  if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']') addr = addr.substr(1, addr.size() - 2);
  boost::system::error_code ec;
  auto parsed = boost::asio::ip::make_address(std::string(addr), ec);
  if (ec) {
    return MakeError("--resolve", std::string(value),
                     fmt::format("\"{}\" is not a numeric IPv4 or IPv6 address (one address only); {}", addr,
                                 kPinForm));
  }
  pin.address = parsed.to_string();
  return pin;
}

std::optional<boost::asio::ip::address> Resolver::Pinned(const std::string& host, std::uint16_t port) const {
  for (const auto& pin : pins_) {
    if (pin.host != host || (pin.port != 0 && pin.port != port)) continue;
    boost::system::error_code ec;
    auto a = boost::asio::ip::make_address(pin.address, ec);
    if (!ec) return a;
  }
  return std::nullopt;
}

std::optional<Resolution> Resolver::ResolveNow(const std::string& host, std::uint16_t port) const {
  Resolution out;
  std::string name = NormaliseHost(host);
  if (auto pinned = Pinned(name, port)) {
    out.addresses.push_back(*pinned);
    out.pinned = true;
    return out;
  }
  boost::system::error_code ec;
  auto literal = boost::asio::ip::make_address(name, ec);
  if (ec) return std::nullopt;
  out.addresses.push_back(literal);
  return out;
}

boost::asio::awaitable<Resolution> Resolver::Resolve(std::string host, std::uint16_t port) const {
  if (auto now = ResolveNow(host, port)) co_return std::move(*now);
  Resolution out;
  host = NormaliseHost(host);
  boost::system::error_code ec;
  boost::asio::ip::tcp::resolver resolver(co_await boost::asio::this_coro::executor);
  std::string service = std::to_string(port);
  auto results = co_await resolver.async_resolve(host, service,
                                                 boost::asio::ip::tcp::resolver::numeric_service,
                                                 boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  if (ec) {
    out.error = fmt::format("name not found: {}", ec.message());
    co_return out;
  }
  for (const auto& entry : results) {
    auto a = entry.endpoint().address();
    bool seen = false;
    for (const auto& b : out.addresses) seen = seen || a == b;
    if (!seen) out.addresses.push_back(a);
  }
  if (out.addresses.empty()) out.error = "name not found: no addresses";
  co_return out;
}

}  // namespace mcpcell
