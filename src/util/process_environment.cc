#include "util/process_environment.h"

extern char** environ;  // environ(7)

namespace mcpcell {

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

std::optional<std::string> EnvironmentValue(const std::vector<std::string>& environment, std::string_view name) {
  for (const std::string& entry : environment) {
    if (entry.size() > name.size() && entry[name.size()] == '=' && entry.compare(0, name.size(), name) == 0) {
      return entry.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

}  // namespace mcpcell
