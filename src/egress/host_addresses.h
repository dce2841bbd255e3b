#pragma once
// The addresses of this machine's own interfaces, as the proxy sees them
// (the supervisor runs in the host's network namespace). A connection to one
// of them reaches services listening on 0.0.0.0 from inside the machine,
// past any firewall that guards that address from outside, so the address
// check refuses them like loopback even when they look public.

#include <optional>
#include <string>

#include <boost/asio/ip/address.hpp>

namespace mcpcell {

/// "this machine's own address (eth0)" when `address` is assigned to one of
/// the host's interfaces, else nullopt. The interface list is read with
/// getifaddrs(3) and cached for a second: addresses come and go (DHCP, VPNs)
/// but a netlink dump per connection would cost more than the proxying.
std::optional<std::string> HostOwnAddress(const boost::asio::ip::address& address);

}  // namespace mcpcell
