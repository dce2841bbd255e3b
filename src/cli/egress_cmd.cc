// `mcpcell egress-proxy`: mcpcell's egress proxy on a host port, outside any
// cell, with the same rules a cell would get (the profile and flags lower
// through LowerNetwork exactly as for `mcpcell run`). For benchmarks against
// other proxies and for testing rules by hand with curl. No DNS stub and no
// redirected connections in this mode: clients must be pointed at the proxy.

#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <CLI/CLI.hpp>
#include <netinet/in.h>
#include <sys/socket.h>

#include <csignal>
#include <cstring>
#include <memory>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <fmt/format.h>

#include "audit/audit_log.h"
#include "cli/commands.h"
#include "core/exit_codes.h"
#include "egress/egress_audit.h"
#include "egress/http_target.h"
#include "egress/proxy.h"
#include "egress/proxy_context.h"
#include "profile/lower.h"
#include "profile/permission_profile.h"
#include "util/diag.h"
#include "util/startup_pages.h"

#include <nlohmann/json.hpp>

namespace mcpcell {
namespace {

struct EgressProxyOptions {
  std::string listen;
  std::string profile = "none";
  std::vector<std::string> allow_host;
  std::vector<std::string> allow_port;
  std::vector<std::string> resolve;
  std::string audit_log;
};

/// A listening TCP socket on `listen` ("127.0.0.1:3128", "[::1]:0").
Result<UniqueFd> Listen(const std::string& listen) {
  // Port 0 (any free port, as --help says) is no authority's port: parsed
  // with a stand-in, then bound as 0; the chosen port is said when it listens.
  bool any_port = listen.size() > 2 && listen.ends_with(":0");
  auto where = ParseAuthority(any_port ? listen.substr(0, listen.size() - 1) + "1" : listen, 0);
  boost::system::error_code ec;
  auto address = where ? boost::asio::ip::make_address(where->host, ec) : boost::asio::ip::address();
  if (!where || ec) return MakeError("--listen", listen, "expected ADDRESS:PORT with a numeric address, e.g. 127.0.0.1:3128");
  boost::asio::ip::tcp::endpoint endpoint(address, any_port ? 0 : where->port);
  UniqueFd fd(::socket(address.is_v4() ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("egress proxy: socket");
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), endpoint.data(), static_cast<socklen_t>(endpoint.size())) != 0) {
    return ErrnoError("egress proxy: bind", listen);
  }
  if (::listen(fd.get(), 4096) != 0) return ErrnoError("egress proxy: listen", listen);
  return fd;
}

Result<NetworkSpec> RulesFrom(const EgressProxyOptions& o) {
  auto profile = LoadProfile(o.profile);
  if (!profile) return profile.error();
  // This proxy enforces only a profile's network part; the rest would be
  // accepted and ignored (adv8).
  nlohmann::json shown = ToJson(*profile);
  for (const char* key : {"read", "write", "mcpcell"}) {
    if (shown.contains(key) && !shown[key].empty()) {
      return MakeError("--permission-profile", o.profile,
                       std::string("its \"") + key + "\" is not the egress proxy's to enforce (it applies only "
                       "network.outbound); use a profile with only a network block here");
    }
  }
  // The same lowering as `mcpcell run`, pins included, so the rules are identical.
  auto plan = LowerNetwork(*profile, o.allow_host, o.allow_port, o.resolve);
  if (!plan) return plan.error();
  NetworkSpec spec = plan->spec;
  // insecure_allow_all: for this proxy it means audit-only (every name and
  // port, address checks still on).
  if (profile->insecure_allow_all || spec.mode == NetworkSpec::Mode::kOpen) spec.allow_all = true;
  return spec;
}

int RunEgressProxy(const EgressProxyOptions& o) {
  auto spec = RulesFrom(o);
  if (!spec) {
    SayAs("egress-proxy", spec.error().Message());
    return kExitUsage;
  }
  std::optional<AuditLog> log;
  if (!o.audit_log.empty()) {
    auto opened = AuditLog::Open(o.audit_log);
    if (!opened) {
      SayAs("egress-proxy", opened.error().Message());
      return kExitUsage;
    }
    log.emplace(std::move(*opened));
  }
  auto listener = Listen(o.listen);
  if (!listener) {
    SayAs("egress-proxy", listener.error().Message());
    return listener.error().what == "--listen" ? kExitUsage : 1;
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listener->get(), reinterpret_cast<sockaddr*>(&bound), &len);
  boost::asio::ip::tcp::endpoint shown;
  std::memcpy(shown.data(), &bound, len);

  EgressAudit audit(log ? &*log : nullptr, "egress-proxy");
  ProxyContext ctx{EgressRules::FromSpec(*spec), Resolver(spec->resolve), audit, nullptr};
  boost::asio::io_context io(1);
  if (auto started = StartProxy(io, std::move(*listener), ctx); !started) {
    SayAs("egress-proxy", started.error().Message());
    return 1;
  }
  boost::asio::signal_set stop(io, SIGINT, SIGTERM);
  stop.async_wait([&io](const boost::system::error_code&, int) { io.stop(); });
  SayAs("egress-proxy",
        fmt::format("listening on {}:{} ({})",
                    shown.address().is_v6() ? "[" + shown.address().to_string() + "]" : shown.address().to_string(),
                    shown.port(),
                    spec->allow_all ? "insecure_allow_all: every host and port, audited"
                    : spec->allow_hosts.empty() && spec->allow_ports.empty()
                        ? "nothing is allowed: give --allow-host/--allow-port or a profile"
                        : "allow-list"));
  // Start-up is over: the file pages only it used need not stay mapped
  // (util/startup_pages.h); what serving needs faults back in.
  ReleaseStartupPages();
  for (;;) {
    try {
      io.run();
      return 0;
    } catch (const std::exception& e) {
      SayAs("egress-proxy", std::string("unexpected error, still serving: ") + e.what());
    }
  }
}

}  // namespace

void AddEgressProxyCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<EgressProxyOptions>();
  auto* cmd = app.add_subcommand(
      "egress-proxy", "Run mcpcell's egress proxy on a host port (HTTP CONNECT, HTTP, SOCKS5) with a profile's rules");
  cmd->add_option("--listen", opts->listen, "ADDRESS:PORT to listen on, e.g. 127.0.0.1:3128 (port 0: any)")
      ->required();
  cmd->add_option("--permission-profile", opts->profile, "ToolHive permission profile: none (default), network, or a FILE");
  cmd->add_option("--allow-host", opts->allow_host, "allow HOST (.domain for the domain and below)");
  cmd->add_option("--allow-port", opts->allow_port, "allow PORT");
  cmd->add_option("--resolve", opts->resolve, "pin HOST on PORT (* = any) to ADDRESS, like curl's")
      ->type_name("HOST:PORT:ADDRESS");
  cmd->add_option("--audit-log", opts->audit_log, "append one JSON line per attempt to FILE (created 0600)");
  cmd->callback([opts, exit_code] { *exit_code = RunEgressProxy(*opts); });
}

}  // namespace mcpcell
