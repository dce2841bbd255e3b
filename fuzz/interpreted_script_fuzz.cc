// libFuzzer target: what an interpreter command line runs, as the policy
// judges it (src/source/interpreted_script.cc): InterpretedScriptOf over
// `mcpcell run -- ARGV` from a client's config, and the readers of the
// option values in it, FileUrlPath and HasUrlScheme. Input: CWD NUL ARGV0
// NUL ARG... (a CWD that is not absolute is taken as unreadable, "").
//
// Checks:
// - every source is "command://..."; a script's path is absolute when the
//   cwd is known; a script and a module exclude each other;
// - a file: URL's path is absolute and no longer than the URL after "file:";
// - a word with a URL scheme has two or more characters before its colon.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "source/interpreted_script.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> out;
  while (out.size() < 64) {
    std::size_t nul = text.find('\0');
    out.emplace_back(text.substr(0, nul));
    if (nul == std::string_view::npos) break;
    text.remove_prefix(nul + 1);
  }
  return out;
}

void CheckUrlReaders(const std::string& word) {
  if (auto path = mcpcell::FileUrlPath(word)) {
    Check(!path->empty() && path->front() == '/');
    Check(path->size() + 5 <= word.size());
  }
  if (mcpcell::HasUrlScheme(word)) {
    std::size_t colon = word.find(':');
    Check(colon != std::string::npos && colon >= 2);
  }
}

void CheckScript(const mcpcell::InterpretedScript& s, const std::string& cwd) {
  Check(s.source.rfind("command://", 0) == 0);
  Check(s.script.empty() == s.script_path.empty());
  if (!s.script_path.empty() && !cwd.empty()) Check(s.script_path.front() == '/');
  Check(s.script.empty() || s.module.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words = Words(std::string_view(reinterpret_cast<const char*>(data), size));
  std::string cwd = words.front();
  if (cwd.empty() || cwd.front() != '/') cwd.clear();
  std::vector<std::string> argv(words.begin() + 1, words.end());
  for (const auto& w : argv) CheckUrlReaders(w);
  if (argv.empty()) return 0;
  Check(mcpcell::PlainCommandSource(argv[0], cwd).rfind("command://", 0) == 0);
  if (auto s = mcpcell::InterpretedScriptOf(argv, cwd)) CheckScript(*s, cwd);
  return 0;
}
