#include "cell/env_notice.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace mcpcell {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool LooksLikeCredential(std::string_view name) {
  std::string n = Upper(name);
  for (std::string_view exact : {"TOKEN", "API_KEY", "APIKEY", "SECRET", "PASSWORD", "PASSWD"}) {
    if (n == exact) return true;
  }
  for (std::string_view suffix : {"_TOKEN", "_KEY", "_SECRET", "_PAT", "_CREDENTIALS", "_APIKEY", "_API_KEY"}) {
    if (EndsWith(n, suffix)) return true;
  }
  return n.find("PASSWORD") != std::string::npos || n.find("PASSWD") != std::string::npos;
}

std::vector<std::string> UnpassedCredentials(const std::vector<std::string>& environment,
                                             const std::map<std::string, std::string>& cell_env,
                                             const std::vector<SecretSpec>& secrets,
                                             const std::vector<std::string>& dropped_on_purpose) {
  std::set<std::string> passed(dropped_on_purpose.begin(), dropped_on_purpose.end());
  for (const auto& [name, value] : cell_env) passed.insert(name);
  for (const auto& s : secrets) {
    if (s.env_name) passed.insert(*s.env_name);
  }
  std::set<std::string> out;
  for (const auto& entry : environment) {
    std::string name = entry.substr(0, entry.find('='));
    if (!name.empty() && LooksLikeCredential(name) && passed.count(name) == 0) out.insert(name);
  }
  return {out.begin(), out.end()};
}

std::string UnpassedCredentialsNote(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  std::string one = names.front();
  return "note: the server does not get " + list + " from mcpcell's environment (a client's \"env\" block puts "
         "variables there; a cell starts with a clean environment). To pass one: --env " + one +
         " (the value enters the cell's environment), or --secret " + one + "=FILE --secret-env " + one +
         " (the value stays in a file). To drop it without this note: --drop-env " + one;
}

}  // namespace mcpcell
