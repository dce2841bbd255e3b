// libFuzzer target: the word splitter of command sources and the word-by-word
// match of a trusted_sources glob against one (src/policy/command_glob.cc).
// The glob comes from a policy file, the source from `mcpcell run`'s command
// line. Input: GLOB NUL SOURCE (no NUL: the same bytes are both).
//
// Checks, for the source's words:
// - escaping every byte of each word and splitting again gives the same words;
// - the glob that names each word literally matches the source (a word with
//   a NUL excepted: fnmatch(3) reads C strings).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "policy/command_glob.h"

namespace {

// `words` joined so that ShellWords reads them back: each byte after a
// backslash, an empty word as ''.
std::string Escaped(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    if (w.empty()) out += "''";
    for (char c : w) out += {'\\', c};
  }
  return out;
}

// Each word as an fnmatch(3) pattern that matches only itself.
std::vector<std::string> LiteralGlobs(const std::vector<std::string>& words) {
  std::vector<std::string> globs;
  for (const auto& w : words) {
    std::string g;
    for (char c : w) g += {'\\', c};
    globs.push_back(g);
  }
  return globs;
}

bool HasNul(const std::vector<std::string>& words) {
  for (const auto& w : words) {
    if (w.find('\0') != std::string::npos) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto nul = text.find('\0');
  std::string glob = text.substr(0, nul);
  std::string source = nul == std::string::npos ? text : text.substr(nul + 1);

  (void)mcpcell::CommandGlobMatch(glob, source);
  auto words = mcpcell::ShellWords(source);
  if (mcpcell::ShellWords(Escaped(words)) != words) std::abort();
  if (!HasNul(words) && !mcpcell::CommandGlobMatch(Escaped(LiteralGlobs(words)), source)) std::abort();
  return 0;
}
