#include "egress/host_addresses.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace mcpcell {
namespace {

using Entry = std::pair<boost::asio::ip::address, std::string>;

std::vector<Entry> ReadInterfaces() {
  std::vector<Entry> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      sockaddr_in sin{};
      std::memcpy(&sin, i->ifa_addr, sizeof sin);
      boost::asio::ip::address_v4::bytes_type b{};
      std::memcpy(b.data(), &sin.sin_addr, b.size());
      out.emplace_back(boost::asio::ip::address_v4(b), i->ifa_name);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      sockaddr_in6 sin6{};
      std::memcpy(&sin6, i->ifa_addr, sizeof sin6);
      boost::asio::ip::address_v6::bytes_type b{};
      std::memcpy(b.data(), &sin6.sin6_addr, b.size());
      out.emplace_back(boost::asio::ip::address_v6(b), i->ifa_name);
    }
  }
  ::freeifaddrs(list);
  return out;
}

}  // namespace

std::optional<std::string> HostOwnAddress(const boost::asio::ip::address& address) {
  static std::mutex mu;
  static std::vector<Entry> cached;
  static std::chrono::steady_clock::time_point read_at;
  std::lock_guard lock(mu);
  auto now = std::chrono::steady_clock::now();
  if (cached.empty() || now - read_at > std::chrono::seconds(1)) {
    cached = ReadInterfaces();
    read_at = now;
  }
  // An IPv4-mapped IPv6 literal (::ffff:a.b.c.d) reaches the same socket.
  boost::asio::ip::address plain = address;
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    plain = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  }
  for (const auto& [a, name] : cached) {
    if (a == plain) return "this machine's own address (interface " + name + ")";
  }
  return std::nullopt;
}

}  // namespace mcpcell
