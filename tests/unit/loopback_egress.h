#pragma once
// An EgressService as a run has one, for the tests that attack it over
// loopback: its proxy listens on a free 127.0.0.1 port, its allow-list holds
// only "allowed.test" (pinned to 127.0.0.1, any port), its audit goes to
// `log`.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "audit/audit_log.h"
#include "egress/egress_service.h"
#include "test_sockets.h"

namespace mcpcell::test {

/// The service (null, with a test failure, when it could not start); its
/// proxy's port in `*port`. `server`: the name its audit events carry.
inline std::unique_ptr<EgressService> StartAllowedTestEgress(AuditLog* log, const char* server, std::uint16_t* port) {
  NetworkSpec n;
  n.mode = NetworkSpec::Mode::kAllowList;
  n.allow_hosts = {"allowed.test"};
  n.resolve = {{"allowed.test", 0, "127.0.0.1"}};
  UniqueFd listener = test_sockets::ListenOn("127.0.0.1", 0, 1024);
  if (!listener.valid()) {
    ADD_FAILURE() << "cannot listen on 127.0.0.1";
    return nullptr;
  }
  *port = test_sockets::PortOf(listener.get());
  EgressSockets sockets;
  sockets.proxy_listener = std::move(listener);
  auto service = EgressService::Start(EgressConfig{n, server, log}, std::move(sockets));
  if (!service.ok()) {
    ADD_FAILURE() << service.error().Message();
    return nullptr;
  }
  return std::move(*service);
}

}  // namespace mcpcell::test
