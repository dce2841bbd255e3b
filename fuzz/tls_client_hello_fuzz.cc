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
  // Fed in three reads with a decision after each (a tunnel's life): what
  // the gate passes is always a prefix of what the cell sent, in order.
  {
    mcpcell::ServerNameGate fed("registry.example", 80, "advice", "");
    std::string passed;
    bool open = false;
    std::size_t from = 0;
    for (std::size_t part : {size / 3, size / 3, size - 2 * (size / 3)}) {
      fed.Add(bytes.substr(from, part));
      from += part;
      for (int round = 0; round <= static_cast<int>(size) + 1 && !open; ++round) {
        auto v = fed.Decide(false);
        if (v == mcpcell::ServerNameGate::Verdict::kPassSome) {
          std::string piece = fed.TakePassable();
          if (piece.empty()) std::abort();
          passed += piece;
          continue;
        }
        if (v == mcpcell::ServerNameGate::Verdict::kOpen) {
          passed += fed.TakeHeld();
          open = true;
        }
        if (v == mcpcell::ServerNameGate::Verdict::kRefused) return 0;
        break;
      }
      if (open) break;
      if (passed.size() > from || bytes.substr(0, passed.size()) != passed) std::abort();
    }
    if (open && passed != bytes.substr(0, passed.size())) std::abort();
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
