// libFuzzer target: a cell's first bytes into a tunnel, as the egress
// proxy's server-name gate reads them (src/egress/tls_client_hello.cc,
// server_name_gate.cc): fed whole and in two pieces, the verdicts must agree
// with the whole and a named server must lie inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "egress/server_name_gate.h"
#include "egress/tls_client_hello.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  mcpcell::ClientHelloRead whole = mcpcell::ReadClientHello(bytes);
  if (whole.server_name && bytes.find(*whole.server_name) == std::string_view::npos) std::abort();
  if (whole.kind == mcpcell::ClientHelloRead::Kind::kMalformed && whole.why.empty()) std::abort();
  // Every prefix is either undecided or decided as the whole is.
  for (std::size_t cut : {std::size_t{1}, size / 2, size > 0 ? size - 1 : 0}) {
    if (cut > size) continue;
    mcpcell::ClientHelloRead part = mcpcell::ReadClientHello(bytes.substr(0, cut));
    if (part.kind != mcpcell::ClientHelloRead::Kind::kNeedMore && part.kind != whole.kind) std::abort();
  }
  mcpcell::ServerNameGate gate("registry.example", 80, "advice", std::string(bytes.substr(0, size / 2)));
  gate.Add(bytes.substr(size / 2));
  // At EOF it always decides; what it passes, in pieces or whole, is the input in order.
  std::string passed;
  for (int round = 0; round <= static_cast<int>(size); ++round) {
    auto v = gate.Decide(true);
    if (v == mcpcell::ServerNameGate::Verdict::kNeedMore) std::abort();
    if (v == mcpcell::ServerNameGate::Verdict::kPassSome) {
      std::string part = gate.TakePassable();
      if (part.empty()) std::abort();  // no progress would loop the tunnel
      passed += part;
      continue;
    }
    if (v == mcpcell::ServerNameGate::Verdict::kOpen && passed + gate.TakeHeld() != bytes) std::abort();
    if (v == mcpcell::ServerNameGate::Verdict::kRefused && gate.refusal().empty()) std::abort();
    return 0;
  }
  std::abort();  // more rounds than bytes: no progress
  return 0;
}
