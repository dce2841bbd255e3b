#pragma once
// The clean-environment rule drops every variable of mcpcell's environment
// that is not passed on purpose (--env, the profile's env, --secret-env). An
// MCP client puts a server's configured variables (its "env" block: API keys)
// in mcpcell's environment, so the rule drops exactly what the user set, and
// the server fails later asking for a key (issue 14 item 4). These functions
// find the dropped variables that look like credentials, by NAME only: a
// value is never read, compared or printed.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/cell_spec.h"

namespace mcpcell {

/// True for names like *_TOKEN, *_KEY, *_SECRET, *_PAT, *_CREDENTIALS,
/// *_APIKEY, *PASSWORD*, *PASSWD*, API_KEY, TOKEN (case-insensitive). A
/// variable that holds a socket path or the like (SSH_AUTH_SOCK) does not match.
bool LooksLikeCredential(std::string_view name);

/// The names in `environment` (NAME=VALUE entries, as environ(7)) that look
/// like credentials and that the cell does not get: not in `cell_env`, not the
/// variable of a --secret-env, not in `dropped_on_purpose` (--drop-env).
/// Sorted, each once.
std::vector<std::string> UnpassedCredentials(const std::vector<std::string>& environment,
                                             const std::map<std::string, std::string>& cell_env,
                                             const std::vector<SecretSpec>& secrets,
                                             const std::vector<std::string>& dropped_on_purpose);

/// The one stderr line about them ("" when `names` is empty): names, why, and
/// the flags that pass or silence each.
std::string UnpassedCredentialsNote(const std::vector<std::string>& names);

}  // namespace mcpcell
