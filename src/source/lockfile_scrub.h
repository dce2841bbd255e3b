#pragma once
// npm records where every package came from in its lockfiles (`resolved`,
// the tarball's URL, whole): for a registry that takes its token in the URL
// path (url_credential.h), the token. The install's lockfiles are read by
// the server's own cell and by any cell later granted a read of mcpcell's
// cache (adv19), so the token is replaced in them before anything but npm
// has read them.

#include <string>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// What a token is replaced by.
inline constexpr const char* kScrubbedToken = "[token-removed-by-mcpcell]";

/// Replaces every occurrence of each of `pieces` in every string (keys too)
/// of `prefix`'s package-lock.json and node_modules/.package-lock.json,
/// where they exist. A lockfile that is not a regular file, or not JSON, is
/// an error: it is not left as it was.
Status ScrubLockfiles(const std::string& prefix, const std::vector<std::string>& pieces);

/// The same for one JSON text (for the tests and the fuzzer).
Result<std::string> ScrubJsonText(const std::string& text, const std::vector<std::string>& pieces);

}  // namespace mcpcell
