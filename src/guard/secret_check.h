#pragma once
// One question of the relay's secret rules asked outside the relay: does
// this text, which mcpcell is about to hand to untrusted code, hold a
// secret? Asked of the npm registry URLs an install-script cell would be
// given (source/url_credential.h); source/ sits below guard/, so the check
// is handed down as a function (cli/ passes HoldsBuiltinSecret).

#include <string_view>

namespace mcpcell {

/// Whether `text` holds a secret by the built-in rules (guard/secret_rules.h,
/// the relay's), compiled at the first call. When they cannot be compiled,
/// every text counts as holding one: fail closed.
bool HoldsBuiltinSecret(std::string_view text);

}  // namespace mcpcell
