#include "client/env_file_names.h"

#include <algorithm>
#include <sstream>

#include "client/wrap_env.h"

namespace mcpcell {
namespace {

std::string Trimmed(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") + 1 - b);
}

}  // namespace

Result<std::vector<std::string>> EnvFileNames(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string s = Trimmed(line);
    if (s.empty() || s[0] == '#') continue;
    if (s.rfind("export ", 0) == 0) s = Trimmed(s.substr(7));
    auto eq = s.find('=');
    // dotenv ignores a line without "=": so does this.
    if (eq == std::string::npos) continue;
    std::string name = Trimmed(s.substr(0, eq));
    if (!IsEnvName(name)) {
      return MakeError("read the names", "", "line " + std::to_string(n) + ": '" + name +
                                                 "' is not a plain NAME ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

}  // namespace mcpcell
