#pragma once
// Where the MCP clients people use keep their server list on Linux, and in
// which format. Each row cites where its path and key were confirmed.

#include <string>
#include <vector>

namespace mcpcell {

struct KnownClient {
  enum class Format { kJson, kJsonc, kToml, kYaml };
  std::string id;            ///< what `mcpcell client wrap ID` takes
  std::string name;          ///< what the user calls it
  std::string path;          ///< absolute, after ~ and XDG_CONFIG_HOME
  Format format = Format::kJson;
  std::string servers_key;   ///< the top-level key that maps server names to entries
  bool project_scopes = false;  ///< also projects.<dir>.<servers_key> (Claude Code's local scope)
};

/// The clients, with paths resolved for `home` and `xdg_config` (XDG_CONFIG_HOME,
/// or home + "/.config" when that is unset or relative).
std::vector<KnownClient> KnownClients(const std::string& home, const std::string& xdg_config);

/// "JSON", "JSONC", "TOML", "YAML".
std::string ToString(KnownClient::Format f);

}  // namespace mcpcell
