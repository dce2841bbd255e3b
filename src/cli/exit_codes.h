#pragma once
// Exit codes of mcpcell itself. Anything else is the server's own status
// (128+N when it was killed by signal N). Documented in README and docs/.

namespace mcpcell {

inline constexpr int kExitUsage = 2;                  ///< bad flag, bad policy/profile file
inline constexpr int kExitIsolationUnavailable = 122;  ///< isolation asked for, cannot be had
inline constexpr int kExitDenied = 123;               ///< the policy refused the server
inline constexpr int kExitTimeout = 124;              ///< --timeout expired (like timeout(1))
inline constexpr int kExitSetupFailed = 125;          ///< the cell could not be built
inline constexpr int kExitCannotExec = 126;           ///< server command found but not executable
inline constexpr int kExitNotFound = 127;             ///< server command not found in the cell

}  // namespace mcpcell
