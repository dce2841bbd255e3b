#pragma once
// npm's User-Agent as npm exports it to every script (npm_config_user_agent;
// @npmcli/config lib/definitions/definitions.js, "user-agent"):
// "npm/{npm-version} node/{node-version} {platform} {arch}
// workspaces/{workspaces} {ci}", trimmed. Install scripts read it to tell
// npm from yarn or pnpm (only-allow, husky and the like); the script cells
// run no npm that would set it (source/lifecycle.h).

#include <string>
#include <string_view>

namespace mcpcell {

/// Node's process.arch for a uname(2) machine ("x86_64" -> "x64",
/// "aarch64" -> "arm64"); the machine itself where Node uses that name.
std::string NodeArch(std::string_view machine);

/// The User-Agent of the npm at `npm_root` (its package directory: its
/// package.json says its version) with the node at `node` (asked for
/// `--version` once per process: every cell of a run gets the same), on
/// this machine: workspaces/false (an npx:// install has none) and no ci
/// (the cell's environment is clean: npm in it would detect none either).
/// "" when either version cannot be read: the variable is then not set.
std::string NpmUserAgent(const std::string& npm_root, const std::string& node);

}  // namespace mcpcell
