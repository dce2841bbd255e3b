#include "policy/command_glob.h"

#include <fnmatch.h>

namespace mcpcell {

bool GlobMatch(const std::string& glob, const std::string& text) {
  return ::fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

std::vector<std::string> ShellWords(const std::string& s) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      else cur += c;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(cur)), cur.clear();
      in_word = false;
      continue;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < s.size()) {
      cur += s[++i];
    } else {
      cur += c;
    }
    in_word = true;
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

bool CommandGlobMatch(const std::string& glob, const std::string& source) {
  auto g = ShellWords(glob);
  auto w = ShellWords(source);
  if (g.size() != w.size()) return false;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!GlobMatch(g[i], w[i])) return false;
  }
  return true;
}

}  // namespace mcpcell
