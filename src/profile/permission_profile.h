#pragma once
// Permission profiles in ToolHive's format, read unchanged:
//   {"network": {"outbound": {"insecure_allow_all", "allow_host", "allow_port", "allow_transport"},
//                "inbound": {"allow_host"}},
//    "read": [...], "write": [...], "privileged": false, "name": "..."}
// plus mcpcell's own extension under the top-level key "mcpcell" (limits,
// env, secrets, tool filters). ToolHive decodes profiles with Go's
// encoding/json, which ignores unknown fields, so it reads such a file and
// simply skips the "mcpcell" block. mcpcell itself refuses unknown keys.
// See docs/PROFILES.md.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "guard/secret_policy.h"
#include "util/error.h"

namespace mcpcell {

/// The "mcpcell" block: things ToolHive's format has no words for.
struct ProfileExtension {
  std::optional<std::string> memory;    ///< "512m"
  std::optional<std::uint64_t> pids;
  std::optional<double> cpus;
  std::optional<std::string> tmp_size;  ///< "64m"
  std::optional<std::string> timeout;   ///< "30s"
  std::map<std::string, std::string> env;         ///< NAME → value (never for secrets)
  std::map<std::string, std::string> secrets;     ///< NAME → host file (absolute)
  std::map<std::string, std::string> secret_env;  ///< secret NAME → env var, only when wanted
  std::vector<std::string> tools_allow;  ///< tool-name globs the relay lets through (later issue)
  std::vector<std::string> tools_deny;
  std::vector<std::string> prompts_allow;     ///< mcpcell.prompts: prompt-name globs, like tools
  std::vector<std::string> prompts_deny;
  std::vector<std::string> resources_allow;   ///< mcpcell.resources: resource-URI globs, like tools
  std::vector<std::string> resources_deny;
  std::optional<std::string> max_message;   ///< the relay's limits: "64m"
  std::optional<std::string> call_rate;     ///< "10/s"
  std::optional<std::uint64_t> max_inflight;
  std::optional<std::string> call_timeout;  ///< "30s"
  std::optional<SecretPolicy> secret_scan;  ///< mcpcell.secret_scan; absent: the default (redact both ways)
  std::optional<std::string> pins_mode;       ///< mcpcell.pins.mode "on" | "off" (unset: on where the relay runs)
  std::optional<std::string> pins_poisoning;  ///< mcpcell.pins.poisoning "warn" | "block"
};

struct PermissionProfile {
  std::string name;  ///< "none", "network", a file path, or "registry:<entry>"
  std::vector<std::string> read;   ///< "PATH" or "HOST:CELL", read-only
  std::vector<std::string> write;  ///< "PATH" or "HOST:CELL", read-write (implies read)
  bool insecure_allow_all = false;
  std::vector<std::string> allow_host;  ///< "example.com" exact; ".example.com" domain and below
  std::vector<std::uint16_t> allow_port;
  std::vector<std::string> inbound_allow_host;
  ProfileExtension ext;
  std::vector<std::string> warnings;  ///< accepted-but-obsolete fields (allow_transport)

  /// Outbound access of any kind is asked for.
  bool RequestsNetwork() const {
    return insecure_allow_all || !allow_host.empty() || !allow_port.empty();
  }
  bool RequestsWrite() const { return !write.empty(); }
};

/// Reads a profile object. `origin` names the file in errors; `path` is the
/// JSON path of `j` inside it ("$" for a profile file, "$.servers.x.permissions"
/// inside a catalog). Refuses privileged, unknown keys, wildcard hosts,
/// contradictions (insecure_allow_all together with hosts/ports).
Result<PermissionProfile> ProfileFromJson(const nlohmann::json& j, const std::string& origin,
                                          const std::string& path = "$");

/// Parses profile text (a file's contents); syntax errors carry line:column.
Result<PermissionProfile> ParseProfile(std::string_view text, const std::string& origin);

/// "none" / "network" are built in; anything else is read as a file.
Result<PermissionProfile> LoadProfile(const std::string& name_or_file);

/// The built-in profile of that name, or nullopt.
std::optional<PermissionProfile> BuiltinProfile(const std::string& name);

/// Why `host` cannot be an allow_host entry (wildcards, URLs, ports), or nullopt.
std::optional<std::string> AllowHostProblem(const std::string& host);

/// ToolHive-shaped JSON (with the "mcpcell" block when it has content).
nlohmann::json ToJson(const PermissionProfile& profile);

}  // namespace mcpcell
