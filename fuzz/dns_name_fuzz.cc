// libFuzzer target: the one gate every name a cell sends passes before any
// rule sees it (src/egress/dns_name.h: CanonicalHost, CanonicalWireName,
// PrintableBytes). Besides crashes it checks the gate's promises: what it
// accepts is short, has no byte a resolver or a log line could read another
// way, and is a fixed point (canonical once is canonical for good).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "egress/dns_name.h"

namespace {

void CheckAccepted(const std::string& name) {
  if (name.empty() || name.size() > 253 + 2) std::abort();  // 253 for names; "[...]"-less IPv6 is shorter
  for (unsigned char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':';
    if (!ok && name != ".") std::abort();  // NUL, '%', '@', upper case, spaces, non-ASCII: never
  }
  std::string why;
  auto again = mcpcell::CanonicalHost(name, &why);
  if (name != "." && (!again || *again != name)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string why;
  if (auto host = mcpcell::CanonicalHost(bytes, &why)) {
    CheckAccepted(*host);
  } else if (why.empty()) {
    std::abort();  // a refusal always says why
  }
  why.clear();
  if (auto wire = mcpcell::CanonicalWireName(data, size, &why)) {
    CheckAccepted(*wire);
  } else if (why.empty()) {
    std::abort();
  }
  std::string shown = mcpcell::PrintableBytes(bytes, 64);
  for (unsigned char c : shown) {
    if (c < 0x20 || c > 0x7e) std::abort();  // a log line gets printable ASCII only
  }
  return 0;
}
