#include "util/startup_pages.h"

#include <sys/mman.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mcpcell {
namespace {

struct Mapping {
  std::uintptr_t start = 0, end = 0;
  bool candidate = false;  ///< private, not writable, backed by a file
  std::size_t rss_kb = 0, anonymous_kb = 0;
};

/// "start-end perms offset dev inode [path]": a mapping's first smaps line.
bool ParseHeader(const std::string& line, Mapping* m) {
  std::istringstream in(line);
  std::string range, perms, offset, dev;
  unsigned long long inode = 0;
  if (!(in >> range >> perms >> offset >> dev >> inode)) return false;
  auto dash = range.find('-');
  if (dash == std::string::npos || perms.size() < 4) return false;
  *m = Mapping{};
  m->start = std::stoull(range.substr(0, dash), nullptr, 16);
  m->end = std::stoull(range.substr(dash + 1), nullptr, 16);
  m->candidate = perms[1] != 'w' && perms[3] == 'p' && inode != 0;
  return true;
}

std::size_t Release(const Mapping& m) {
  if (!m.candidate || m.anonymous_kb != 0 || m.rss_kb == 0) return 0;
  if (::madvise(reinterpret_cast<void*>(m.start), m.end - m.start, MADV_DONTNEED) != 0) return 0;
  return m.rss_kb;
}

}  // namespace

std::size_t ReleaseStartupPages() {
  // Read whole before acting: madvise while reading could change what the
  // rest of the file says.
  std::ifstream file("/proc/self/smaps");
  if (!file) return 0;
  std::vector<Mapping> mappings;
  std::string line;
  while (std::getline(file, line)) {
    Mapping header;
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        ParseHeader(line, &header)) {
      mappings.push_back(header);
      continue;
    }
    if (mappings.empty()) continue;
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str(), "Rss: %llu kB", &kb) == 1) mappings.back().rss_kb = kb;
    if (std::sscanf(line.c_str(), "Anonymous: %llu kB", &kb) == 1) mappings.back().anonymous_kb = kb;
  }
  std::size_t released = 0;
  for (const auto& m : mappings) released += Release(m);
  return released;
}

}  // namespace mcpcell
