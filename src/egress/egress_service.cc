// EgressService: the proxy and the DNS stub of one cell on one thread.

#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/egress_service.h"

#include <pthread.h>

#include <exception>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "egress/dns_stub.h"
#include "egress/egress_audit.h"
#include "egress/name_map.h"
#include "egress/proxy.h"
#include "egress/proxy_context.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

class EgressServiceImpl final : public EgressService {
 public:
  explicit EgressServiceImpl(const EgressConfig& config)
      : audit_(config.audit, config.server),
        ctx_{EgressRules::FromSpec(config.network), Resolver(config.network.resolve), audit_, &names_} {
    // A cell of mode none: only its DNS stub runs, to report (issue 14 item 8).
    ctx_.rules.no_network = config.network.mode == NetworkSpec::Mode::kNone;
    ctx_.rules.fixed_how_to_allow = config.network.fixed_how_to_allow;
  }

  ~EgressServiceImpl() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  Status Start(EgressSockets sockets) {
    // A cell without network (mode none) hands over only the DNS socket:
    // nothing to proxy, names to report.
    bool no_network = ctx_.rules.no_network;
    if (!sockets.proxy_listener && !no_network) {
      return MakeError("egress service", "", "no proxy listening socket was handed over");
    }
    if (sockets.proxy_listener) MCPCELL_TRY(StartProxy(io_, std::move(sockets.proxy_listener), ctx_));
    if (sockets.dns_socket) {
      dns_.emplace(io_, std::move(sockets.dns_socket), ctx_.rules, names_, audit_);
      dns_->Start();
    }
    try {
      thread_ = std::thread([this] { Run(); });
    } catch (const std::system_error& e) {
      return MakeError("egress service: start its thread", "", e.what());
    }
    return {};
  }

 private:
  void Run() {
    pthread_setname_np(pthread_self(), "mcpcell-egress");
    // Handlers catch their own exceptions; this is the last line, so one bug
    // cannot take the cell's network down with it.
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        Say(std::string("egress: unexpected error, still serving: ") + e.what());
      } catch (...) {
        Say("egress: unexpected error, still serving");
      }
    }
  }

  // Destruction runs bottom-up: the thread is joined in the destructor body;
  // the DNS stub's socket goes before the io_context it belongs to; the
  // io_context (and with it every connection's coroutine) before the state
  // those coroutines refer to.
  EgressAudit audit_;
  NameMap names_;
  ProxyContext ctx_;
  boost::asio::io_context io_{1};
  std::optional<DnsStub> dns_;
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<EgressService>> EgressService::Start(EgressConfig config, EgressSockets sockets) {
  auto service = std::make_unique<EgressServiceImpl>(config);
  MCPCELL_TRY(service->Start(std::move(sockets)));
  return std::unique_ptr<EgressService>(std::move(service));
}

}  // namespace mcpcell
