#pragma once
// The YAML counterpart of config_edit.h, for Goose's ~/.config/goose/config.yaml
// ("extensions": NAME → {type: stdio, cmd, args, envs, env_keys, ...}). Read
// with libyaml's event parser, which gives each node's byte range, so only
// the bytes of `cmd` and `args` change; everything else stays as it was.

#include <map>
#include <string>
#include <vector>

#include "client/config_edit.h"

namespace mcpcell {

Result<std::vector<EntryChange>> ListYamlServers(const std::string& text, const std::string& servers_key);
Result<ConfigEdit> WrapYamlConfig(const std::string& text, const std::string& servers_key, const WrapOptions& opts,
                                  std::map<std::string, std::string> originals);
Result<ConfigEdit> UnwrapYamlConfig(const std::string& text, const std::string& servers_key,
                                    std::map<std::string, std::string> originals);

}  // namespace mcpcell
