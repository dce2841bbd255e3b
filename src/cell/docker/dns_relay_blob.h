#pragma once
// The static mcpcell-dns-relay program (src/cell/docker/dns_relay/dns_relay.c),
// embedded at build time (CMakeLists.txt): written into a container cell's
// per-run DNS directory by dns_report.cc.

#include <string_view>

namespace mcpcell::docker {

/// The relay's executable bytes.
std::string_view DnsRelayProgram();

}  // namespace mcpcell::docker
