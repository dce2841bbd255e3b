#pragma once
// Whether an npm registry URL carries a credential that an install-script
// cell (untrusted code) would be handed with it (issue 14 item 2). npm's
// `//host/:_authToken` keeps the token out of the URL, and mcpcell never
// passes it on; but some registries take the token IN the URL:
//   - userinfo, "https://user:token@host/": cut off (registry_url.h), so
//     the cells reach the registry without it, as with an _authToken;
//   - the path, "https://npm.fury.io/TOKEN/user/" (Gemfury),
//     ".../api/npm/KEY/" (Artifactory), or the query: nothing can be cut
//     off there, the token is where the registry is. Such a registry is
//     given to no cell at all: not a masked URL that fails in a way no one
//     can read (script_npm.h).
// A token in the path is recognised by the relay's secret rules (a known
// format: npm_, ghp_, AKCp...) or by its shape (RegistryPathToken).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell {

/// Checks text for a secret by the relay's rules (guard/secret_check.h),
/// handed down: source/ cannot include guard/.
using SecretCheck = std::function<bool(std::string_view)>;

/// Whether the http(s) URL `url` has a user or password before its host.
bool HasUserinfo(std::string_view url);

/// Whether `normalized` (NormalizeRegistryUrl's: no userinfo) carries a
/// token in what follows its host: `holds_secret` flags the URL, or a piece
/// of its path, query or fragment (the runs of letters and digits between
/// other characters) has the shape of a generated token: 20 characters or
/// more mixing letters and digits, 32 or more of either alone (hex, base32),
/// or a UUID (8-4-4-4-12 hex digits). Registry paths name repositories
/// (`api/npm/npm-virtual`, `repository/npm-group`, a GitLab project id);
/// a name of 20 characters with a digit in it and no separator is taken
/// for a token too: failing closed, with a message saying what to do.
bool RegistryUrlHoldsToken(std::string_view normalized, const SecretCheck& holds_secret);

/// The pieces of `normalized`'s path, query and fragment that have a
/// token's shape (as above; none when it has none): each token-shaped run
/// and UUID, percent-decoded, and the segments that hold one as written —
/// what must not be shown where the URL would be (npm's output, masked).
std::vector<std::string> TokenPieces(std::string_view normalized);

/// Appends TokenPieces of `url` as NormalizeRegistryUrl reads it (nothing
/// when it is not a registry URL) to `pieces`.
void AppendUrlTokenPieces(std::string_view url, std::vector<std::string>* pieces);

}  // namespace mcpcell
