#pragma once
// The npm registry's URL as the install-script cells get it (issue 14
// item 2): read from npm's own effective config, with the user's token
// never kept, and shown in messages as its origin only (a token may also sit
// in a registry's path, e.g. https://npm-proxy.fury.io/TOKEN/user/).

#include <string>
#include <string_view>

#include "util/error.h"

namespace mcpcell {

/// An http:// or https:// URL read as npm (WHATWG URL) reads it: the scheme
/// case-insensitive, any run of '/' or '\' after it, backslashes as slashes
/// in the rest; returned as "scheme://host[:port]/path..." without the
/// "user:password@" of its authority. Refused, without echoing the URL
/// (it may hold a token), for any other scheme.
Result<std::string> NormalizeRegistryUrl(std::string_view url);

/// `url` as a WHATWG URL parser first sees it: leading and trailing C0
/// controls and spaces gone, and every tab, CR and LF removed wherever it
/// is ("https:/\t/user:pw@host/" is https://user:pw@host/ to npm, adv12).
std::string WhatwgCleaned(std::string_view url);

/// `url` ending in '/', as npm ends a registry's path before it adds a package name.
std::string WithTrailingSlash(std::string url);

/// "scheme://host[:port]" of a NormalizeRegistryUrl result: what messages show.
std::string RegistryOrigin(std::string_view normalized);

}  // namespace mcpcell
