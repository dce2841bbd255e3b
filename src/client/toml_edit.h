#pragma once
// The TOML counterpart of config_edit.h, for Codex's ~/.codex/config.toml
// ([mcp_servers.NAME] tables with command, args, env). Read with toml++,
// which keeps each value's source position, so only the bytes of `command`
// and `args` change: comments, other keys, other tables stay as they were.

#include <map>
#include <string>
#include <vector>

#include "client/config_edit.h"

namespace mcpcell {

Result<std::vector<EntryChange>> ListTomlServers(const std::string& text, const std::string& servers_key);
Result<ConfigEdit> WrapTomlConfig(const std::string& text, const std::string& servers_key, const WrapOptions& opts,
                                  std::map<std::string, std::string> originals);
Result<ConfigEdit> UnwrapTomlConfig(const std::string& text, const std::string& servers_key,
                                    std::map<std::string, std::string> originals);

}  // namespace mcpcell
