#pragma once
// mcpcell's own lines for a human, on stderr (stdout belongs to the server's
// JSON-RPC). One format everywhere: "mcpcell: TEXT" — a subcommand that
// speaks for itself names itself, "mcpcell gc: TEXT". Each line leaves in one
// write(2), so lines of the supervisor's threads (egress, relay) do not mix.
// What must be kept goes to the audit log (audit/audit_log.h), not here.
//
// Include from .cc files only: a .cc that still has a local Say() helper
// would find two.

#include <string_view>

namespace mcpcell {

/// "mcpcell: LINE\n" on stderr.
void Say(std::string_view line);

/// "mcpcell: warning: LINE\n" on stderr: something is weaker than asked or
/// was skipped, and the run goes on.
void Warn(std::string_view line);

/// "mcpcell SUBCOMMAND: LINE\n" on stderr, for `mcpcell gc`, `audit verify`...
void SayAs(std::string_view subcommand, std::string_view line);

/// TEXT on stderr as given (no prefix, no newline added), in one write: a
/// block a person reads whole — --help, the usage hint, a --dry-run diff —
/// rather than one of mcpcell's lines.
void ShowText(std::string_view text);

}  // namespace mcpcell
