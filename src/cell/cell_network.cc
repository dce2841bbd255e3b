#include "cell/cell_network.h"

#include <fmt/format.h>

#include "cell/spec_builder.h"
#include "egress/cell_net.h"

namespace mcpcell {
namespace {

/// The system files a networked runtime needs (resolv.conf, certs, gai.conf);
/// BuildCellSpec built for no network. An allow-list cell gets its own
/// resolv.conf (the DNS stub, written by the cell), never the host's.
void AddNetworkSystemMounts(CellSpec* spec) {
  for (auto& m : SystemMounts(true)) {
    if (spec->network.mode == NetworkSpec::Mode::kAllowList && m.target == "/etc/resolv.conf") continue;
    bool have = false;
    for (const auto& existing : spec->mounts) have = have || existing.target == m.target;
    if (!have) spec->mounts.push_back(std::move(m));
  }
}

/// Proxy-aware programs (curl, Python requests, npm, git) speak to the
/// egress proxy directly; others are redirected to it anyway. A value the
/// user set with --env wins. NO_PROXY keeps the cell's own loopback direct.
void AddProxyEnvironment(CellSpec* spec) {
  const std::string http = CellProxyUrl();
  const std::string socks = fmt::format("socks5h://{}:{}", kCellProxyAddress, kCellProxyPort);
  for (const char* k : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) spec->env.emplace(k, http);
  for (const char* k : {"ALL_PROXY", "all_proxy"}) spec->env.emplace(k, socks);
  for (const char* k : {"NO_PROXY", "no_proxy"}) spec->env.emplace(k, "localhost,127.0.0.1,::1");
}

}  // namespace

void ApplyCellNetwork(CellSpec* spec, NetworkSpec network) {
  spec->network = std::move(network);
  if (spec->network.mode != NetworkSpec::Mode::kNone) AddNetworkSystemMounts(spec);
  if (spec->network.mode == NetworkSpec::Mode::kAllowList) AddProxyEnvironment(spec);
}

}  // namespace mcpcell
