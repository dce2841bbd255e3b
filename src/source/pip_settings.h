#pragma once
// What of pip's config files reaches the host pip of a uvx:// install.
//
// pip reads its settings from config files (pip.conf: /etc, /etc/xdg and
// $XDG_CONFIG_DIRS, ~/.config/pip, $VIRTUAL_ENV) as well as from PIP_*
// variables, and a config file can set everything a variable can: where the
// package is written (`target`, `prefix`, `root`, `user`: ~/.local, where a
// .pth runs in every Python of the user), what is built (`no-binary`,
// `requirement`: a source distribution's setup.py run on the host). Dropping
// the PIP_* spellings of those (uvx_install.cc) left the config spellings
// (adv14). So the host pip reads no config file at all (PIP_CONFIG_FILE=
// /dev/null, which pip documents as "load none"), and mcpcell hands it, as
// PIP_* variables, only the keys that say where packages come from and how
// to reach it — the same keys the variables of the caller's environment may
// set. Every other key is named on stderr as not used: nothing a user wrote
// is ignored without a word.

#include <string>
#include <string_view>
#include <vector>

namespace mcpcell {

struct PipSettings {
  /// "PIP_INDEX_URL=https://..." for the host pip's `command` ("install",
  /// "index"): the command's own section over [global], as pip orders them.
  std::vector<std::string> Env(std::string_view command) const;

  struct Key {
    std::string section;  ///< "global", "install", ...
    std::string name;     ///< "index-url"
    std::string value;
  };
  std::vector<Key> kept;          ///< where packages come from
  std::vector<std::string> unused;  ///< "install.target": not passed on
};

/// Reads `pip config list`'s output ("global.index-url='https://...'", one
/// per line, values as Python's repr). Keys of the environment (":env:.")
/// are left out: the caller's PIP_* variables reach pip as they are. A value
/// whose repr holds an escape this reader does not know is unused, not guessed.
PipSettings ParsePipConfigList(std::string_view text);

/// The one line for stderr naming the unused keys; "" when none.
std::string UnusedPipSettingsNote(const PipSettings& settings);

/// Whether `key` ("index-url") is one pip.conf may give the host pip.
bool IsPipIndexKey(std::string_view key);

/// The PIP_* entries of `env` ("NAME=value") that are not an index
/// setting (PIP_INDEX_URL, PIP_CERT, ...): the host pip must not see them
/// (adv16: PIP_PYTHON had pip re-run itself under any program, PIP_LOG
/// appended its log to any file). Their names, for the caller to drop.
std::vector<std::string> NonIndexPipVariables(const std::vector<std::string>& env);

/// The token-shaped pieces (source/url_credential.h TokenPieces) of the
/// URLs the index variables of `env` name (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL,
/// PIP_FIND_LINKS, PIP_PROXY; space-separated lists): pip prints them whole
/// ("Looking in indexes:", "Downloading"), redacting only a password in the
/// userinfo, and what pip prints reaches the client (adv21: a Gemfury-style
/// path token).
std::vector<std::string> PipIndexTokenPieces(const std::vector<std::string>& env);

}  // namespace mcpcell
