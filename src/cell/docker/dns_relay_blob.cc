#include "cell/docker/dns_relay_blob.h"

// .incbin copies the built relay into this object's read-only data; the
// build reruns this file whenever the relay changes (OBJECT_DEPENDS).
asm(".section .rodata.mcpcell_dns_relay,\"a\"\n"
    ".global mcpcell_dns_relay_begin\n"
    "mcpcell_dns_relay_begin:\n"
    ".incbin \"" MCPCELL_DNS_RELAY_FILE "\"\n"
    ".global mcpcell_dns_relay_end\n"
    "mcpcell_dns_relay_end:\n"
    ".previous\n");

extern "C" const char mcpcell_dns_relay_begin[];
extern "C" const char mcpcell_dns_relay_end[];

namespace mcpcell::docker {

std::string_view DnsRelayProgram() {
  return std::string_view(mcpcell_dns_relay_begin,
                          static_cast<std::size_t>(mcpcell_dns_relay_end - mcpcell_dns_relay_begin));
}

}  // namespace mcpcell::docker
