// libFuzzer target: a remembered grant scan as read back from the user's
// cache (src/cell/grant_scan_cache.cc, ParseRememberedScan). The file is the
// caller's own and checked as such, but a parser must not crash or accept
// what would name a place outside the scanned root: every name it returns
// is relative and free of "." and ".." components, and what it accepts
// formats back to the very same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cell/grant_scan_cache.h"

namespace {

bool Below(const std::string& rel) {
  if (rel.find('\0') != std::string::npos || (!rel.empty() && rel.front() == '/')) return false;
  std::size_t at = 0;
  while (!rel.empty() && at <= rel.size()) {
    std::size_t slash = rel.find('/', at);
    if (slash == std::string::npos) slash = rel.size();
    std::string_view part(rel.data() + at, slash - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = slash + 1;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scan = mcpcell::ParseRememberedScan(text);
  if (!scan) return 0;
  if (scan->walked.empty() || !scan->walked.front().rel.empty() || scan->root.empty() || scan->root[0] != '/') std::abort();
  for (const auto& d : scan->walked) {
    if (!Below(d.rel)) std::abort();
  }
  for (const auto* list : {&scan->creds, &scan->sockets}) {
    for (const auto& n : *list) {
      if (n.empty() || !Below(n)) std::abort();
    }
  }
  if (mcpcell::FormatRememberedScan(*scan) != text) std::abort();
  return 0;
}
