#pragma once
// Lowering a permission profile onto a run: its paths, limits, env and
// secrets join the request (so they pass the same checks as --read/--write,
// including the credential-path refusal), and its network section becomes the
// CellSpec's NetworkSpec with a plain sentence saying what is enforced.

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "core/run_request.h"
#include "profile/permission_profile.h"
#include "util/error.h"

namespace mcpcell {

/// A copy of `req` with the profile folded in: profile read/write paths first,
/// then the flags' (a profile write path the user names with --read is
/// dropped: --read narrows it); limits, env and secrets from the profile only where no
/// flag set them (a flag on the command line wins).
RunRequest MergeProfile(const PermissionProfile& profile, const RunRequest& req);

/// The network the cell gets, and what a user must be told about it.
struct NetworkPlan {
  NetworkSpec spec;
  std::string enforced;               ///< one sentence: what will actually be enforced
  std::vector<std::string> warnings;  ///< loud lines for stderr (open network, unenforceable list)
};

/// Profile outbound rules plus --allow-host/--allow-port, and --resolve pins.
///   insecure_allow_all → kAllowList with allow_all (audit-only: every host
///                        and port, still through mcpcell's egress proxy,
///                        with its address checks; a loud warning)
///   any host or port   → kAllowList: the proxy is the cell's only way out
///   neither            → kNone: loopback only (pins are kept but unused; a note says so)
/// The host's loopback (egress/host_loopback.h): "localhost:PORT" entries,
/// or a bare "localhost" paired with every allow_port (refused when there is
/// none), go to spec.host_ports, never to allow_hosts; when loopback entries
/// were the only hosts, their ports open nothing else.
/// kOpen (the host's network) is never produced from a profile.
/// Errors: a bad --allow-host, --allow-port or --resolve value.
Result<NetworkPlan> LowerNetwork(const PermissionProfile& profile,
                                 const std::vector<std::string>& flag_hosts,
                                 const std::vector<std::string>& flag_ports,
                                 const std::vector<std::string>& flag_resolve = {});

/// One --resolve value: ParseResolvePin (curl's HOST:PORT:ADDRESS, see
/// egress/resolver.h), and HOST must be one name, not a ".domain" or pattern.
Result<ResolvePin> ParseResolveFlag(const std::string& value);

/// Secrets from "NAME=FILE" flags (and the profile), with --secret-env
/// "NAME[=VAR]" mapping. Errors name the flag and what was expected; a
/// --secret-env for an unknown secret is refused. Files must be absolute
/// after resolution (relative ones are made absolute against the cwd).
Result<std::vector<SecretSpec>> LowerSecrets(const std::vector<std::string>& secret_flags,
                                             const std::vector<std::string>& secret_env_flags);

}  // namespace mcpcell
