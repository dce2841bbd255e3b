#pragma once
// Environment variables that make a program run code it was not asked to run:
// a library the dynamic loader maps into it, a module its interpreter loads
// first, a shell's startup file, a helper command a tool spawns. Whoever sets
// one of these on a process decides what code that process runs, whatever
// its command line says. One list for every place mcpcell must not let such a
// variable through to the wrong process: a client's env block (client wrap),
// the host tools mcpcell starts outside any cell (npm, pip), and `run --env`
// on a run the policy lets out of a cell.

#include <span>
#include <string_view>

namespace mcpcell {

/// Whether the variable `name` can make the program that inherits it run
/// other code (the families are listed, with why, in code_injecting_env.cc).
bool InjectsCode(std::string_view name);

/// Whether the variable `name` picks the files a program reads its code or
/// config from, or the programs it runs by name (adv11): HOME (Python's user
/// site and usercustomize.py, git's ~/.gitconfig, npm's ~/.npmrc), the XDG
/// bases (git's $XDG_CONFIG_HOME/git/config: core.fsmonitor runs a command),
/// PATH, ZDOTDIR, INPUTRC, a browser's or Java's path, and the certificate
/// authorities TLS trusts (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, ...). Fine in
/// a cell, which sees only its grants; not on a process that runs outside
/// one. (The host tools keep them: npm and pip behind a proxy need its CA.)
bool ChoosesWhatRuns(std::string_view name);

/// A variable that adds certificate authorities TLS trusts, and whether it
/// names a directory of them rather than a file.
struct CaVariable {
  std::string_view name;
  bool directory = false;
};

/// The variables that add certificate authorities: Node's
/// (NODE_EXTRA_CA_CERTS), OpenSSL's (SSL_CERT_FILE, SSL_CERT_DIR: npm under
/// a node that uses the system store), pip's (REQUESTS_CA_BUNDLE) and curl's
/// (CURL_CA_BUNDLE); the files first. A proxy they name could answer for any
/// host (adv14). Each counts for ChoosesWhatRuns.
std::span<const CaVariable> CaVariables();

/// npm_config_* in any case: npm's configuration, which InjectsCode counts
/// (node-options, script-shell). A host `npm install --ignore-scripts` with
/// no git runs none of it, so the host tools keep these.
bool IsNpmConfig(std::string_view name);

/// PIP_* and UV_* (upper case, as pip and uv read them): pip's and uv's
/// settings, which choose where packages come from (PIP_INDEX_URL,
/// PIP_TRUSTED_HOST, PIP_NO_INDEX, PIP_FIND_LINKS, UV_INDEX, UV_DEFAULT_INDEX,
/// ...) or what is taken as already fetched (UV_CACHE_DIR); new ones come
/// with new versions, so the whole family counts.
bool PicksPackageIndex(std::string_view name);

}  // namespace mcpcell
