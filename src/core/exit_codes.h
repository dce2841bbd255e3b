#pragma once
// Exit codes of mcpcell itself. Anything else is the server's own status
// (128+N when it was killed by signal N). The same table is in README.md
// ("Exit codes") and `run --help`; tests/e2e/first_hour.test.mjs produces each.

namespace mcpcell {

inline constexpr int kExitUsage = 2;                  ///< unknown word, bad value, bad policy/profile, a path that cannot be bound
inline constexpr int kExitIsolationUnavailable = 122;  ///< isolation asked for, cannot be had
inline constexpr int kExitDenied = 123;               ///< the policy refused the server
inline constexpr int kExitTimeout = 124;              ///< --timeout expired (like timeout(1))
inline constexpr int kExitSetupFailed = 125;          ///< the cell could not be built, or the server fetched (npm, image pull)
inline constexpr int kExitCannotExec = 126;           ///< server command found but not executable
inline constexpr int kExitNotFound = 127;             ///< server command or script not found in the cell

}  // namespace mcpcell
