#pragma once
// An environment as data: NAME=VALUE entries, as environ(7) holds them.
// Checks that judge an environment take it as a parameter, so a test hands
// them one and a caller decides whose environment is judged; this is where
// the process's own is read.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell {

/// mcpcell's own environment as NAME=VALUE entries (environ(7)).
std::vector<std::string> ProcessEnvironment();

/// The value of `name` in `environment` as getenv(3) finds it: the first
/// entry "NAME=..."; nullopt when there is none (an entry without '=' is
/// no variable).
std::optional<std::string> EnvironmentValue(const std::vector<std::string>& environment, std::string_view name);

}  // namespace mcpcell
