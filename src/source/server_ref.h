#pragma once
// ServerRef: what the user asked `mcpcell run` to start, parsed but not yet
// resolved. One of: npx://pkg[@version], uvx://pkg[@version],
// docker://image[:tag|@sha256:digest], a registry name, or a plain command
// given after `--`. The spelling `npx/pkg` (no "://") is accepted too.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "util/error.h"

namespace mcpcell {

struct ServerRef {
  enum class Kind { kNpx, kUvx, kDocker, kRegistry, kCommand };
  Kind kind = Kind::kCommand;
  std::string original;  ///< exactly what the user typed (SERVER, or argv[0] for commands)
  std::string package;   ///< npx/uvx: package; docker: image repository; registry: name; command: argv[0]
  std::string version;   ///< npx/uvx: version spec ("" = latest); docker: tag ("" = none)
  std::string digest;    ///< docker: "sha256:<64 hex>" when given
  std::vector<std::string> args;  ///< command: the full argv; others: extra args after `--`
};

/// Parses SERVER and the words after `--`. With no SERVER, `command` is the
/// server's argv. The error names the text and the accepted spellings.
Result<ServerRef> ParseServerRef(const std::optional<std::string>& server,
                                 const std::vector<std::string>& command);

/// "npx" | "uvx" | "docker" | "registry" | "command".
std::string ToString(ServerRef::Kind kind);

/// The canonical source string that trusted_sources globs are matched
/// against: "npx://@scope/pkg@1.2.3" (version omitted when unpinned),
/// "docker://img:tag@sha256:..", "command:///usr/bin/x" (as given).
std::string CanonicalSource(const ServerRef& ref);

/// True for an exact npm/PyPI version: digits.digits.digits with optional
/// pre-release/build suffix ("1.2.3", "2026.8.31", "1.0.0-rc.1"); false for
/// ranges, tags ("latest") and the empty string.
bool IsExactVersion(std::string_view version);

/// True for an exact PEP 440 release ("1.0", "2025.4.7", "1.0rc1",
/// "1.0.post2", "1.0.dev3"); false for ranges, "latest", local versions.
bool IsExactPythonVersion(std::string_view version);

/// True when `name` is a valid npm package name (optionally @scope/name):
/// lowercase letters, digits, "-", ".", "_", "~"; never starts with "-" or ".",
/// so it can never be read as an npm flag.
bool IsValidNpmName(std::string_view name);

/// True when `name` is a PyPI project name (letters, digits, ".", "_", "-";
/// a letter or digit first and last, so never a pip flag or a path), with
/// optional [extras].
bool IsValidPypiName(std::string_view name);

/// "@scope" of "@scope/pkg", or "" for unscoped packages.
std::string PublisherScope(std::string_view package);

nlohmann::json ToJson(const ServerRef& ref);

}  // namespace mcpcell
