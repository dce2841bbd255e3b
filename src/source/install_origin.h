#pragma once
// What an install left in the cache says of where it came from (adv13,
// adv14): an allow run trusts a cache entry only when the install that
// filled it was made under the public registry's settings
// (public_sources.h) and every package it holds came from there. Each check
// says what makes the entry another's, or "" when nothing does.

#include <string>

#include "util/error.h"

namespace mcpcell {

/// Records, in an install directory, whether the settings it was made
/// under were the public registry's (`why` empty) or why not: what an
/// entry's own lockfile cannot say (adv14: npm writes the registry's
/// tarball URL as the registry document gives it, and a man in the middle's
/// answers look like the registry's).
Status WriteInstallOrigin(const std::string& dir, const std::string& why);

/// Why a cache entry's record does not say it was installed under public
/// settings (none, or not public), or "".
std::string WhyOriginIsNotPublic(const std::string& cache_dir);

/// What in an installed entry (`cache_dir`: <npx cache>/<name>@<version>)
/// came from elsewhere: the install's package-lock.json names each
/// package's `resolved` URL;
/// one outside the public registry, or a lockfile that cannot be read,
/// means the cache was filled by an install this run did not make (another
/// environment's registry, adv13), and so does a package with no URL (npm's
/// omit-lockfile-registry-resolved; mcpcell's installs turn it off). ""
/// when every package is the public registry's (bundled ones came with
/// their parent).
std::string WhyInstallIsNotPublic(const std::string& cache_dir);

}  // namespace mcpcell
