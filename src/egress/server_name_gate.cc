#include "egress/server_name_gate.h"

#include "egress/dns_name.h"
#include "egress/host_loopback.h"
#include "egress/tls_client_hello.h"

namespace mcpcell {

ServerNameGate::Verdict ServerNameGate::Refuse(std::string why) {
  refusal_ = std::move(why);
  held_.clear();
  return Verdict::kRefused;
}

ServerNameGate::Verdict ServerNameGate::Decide(bool eof) {
  ClientHelloRead hello = ReadClientHello(held_);
  switch (hello.kind) {
    case ClientHelloRead::Kind::kNotTls:
      return Verdict::kOpen;
    case ClientHelloRead::Kind::kNeedMore:
      if (held_.empty() && eof) return Verdict::kOpen;  // nothing sent: the EOF passes on
      if (!eof) return Verdict::kNeedMore;
      return Refuse("the connection to " + host_ + " closed in the middle of its TLS ClientHello");
    case ClientHelloRead::Kind::kMalformed:
      return Refuse("the TLS ClientHello sent to " + host_ + " cannot be read whole (" + hello.why +
                    "), so the server it names is unknown");
    case ClientHelloRead::Kind::kHello:
      break;
  }
  if (!hello.server_name) return Verdict::kOpen;
  // Compared in the canonical form every name a cell sends is judged in.
  auto name = CanonicalHost(*hello.server_name, nullptr);
  if (name && (*name == host_ || (IsLoopbackName(host_) && IsLoopbackName(*name)))) return Verdict::kOpen;
  return Refuse("the TLS ClientHello names server \"" + PrintableBytes(*hello.server_name, 253) +
                "\", not " + host_ + ", the host this connection was allowed for (a shared front would route it "
                "to that other site)");
}

}  // namespace mcpcell
