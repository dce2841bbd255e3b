#pragma once
// The secret scan of a run's stderr (the server's lines and mcpcell's on
// their way to the client and the run's log, cell/stderr_log.h): each line
// is masked as the relay masks a result (SecretGuard::RedactText), so a
// token a server prints reaches neither the client's log files nor
// <state>/logs. Line by line, so a secret split across two reads of the pipe
// is still seen whole: a partial line waits for its end, for at most
// kStderrLineHold bytes, and the copy flushes it when the pipe falls quiet
// for half a second (a progress line without a newline). A private key
// printed over several lines is masked from its header line to its END line.
// Not seen whole: a
// secret split across a longer pause, or written encoded — the scan is for
// what a server logs by mistake, not what it hides on purpose.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/key_block.h"

namespace mcpcell {

/// A partial line longer than this is scanned and passed on as it is.
inline constexpr std::size_t kStderrLineHold = 64 * 1024;

class StderrRedactor {
 public:
  /// `redact`: a line (no newline) → the line as it may be shown, the
  /// rules that matched added to `*rules`.
  using Redact = std::function<std::string(std::string_view, std::vector<std::string>*)>;
  explicit StderrRedactor(Redact redact) : redact_(std::move(redact)) {}

  /// What may be written now: every whole line of what was held and `chunk`.
  std::string Feed(std::string_view chunk);
  /// The held partial line, scanned (at a quiet pipe, or at the end).
  std::string Flush();
  bool holding() const { return !held_.empty(); }
  /// The rules that masked something since the last call, each once.
  std::vector<std::string> TakeMasked();

 private:

  std::string Line(std::string_view line);
  /// A line that ended: Line(), and the lines of a private key block.
  std::string WholeLine(std::string_view line);
  /// A piece of a line cut at the hold: Line(), and a key block carried
  /// over from the piece before.
  std::string Piece(std::string_view piece);
  /// The rest of a key block carried over a cut: masked to its END.
  std::string CarriedKey(std::string_view piece);
  std::size_t CutAt(std::string_view held, std::size_t hold);
  bool SplitsAMatch(std::string_view held, std::size_t at);
  void Masked(std::string rule);

  Redact redact_;
  std::string held_;
  std::vector<std::string> masked_;
  /// Inside a PEM/OpenSSH/PGP/PuTTY private key printed over several lines
  /// (guard/key_block.h): its body lines are masked whole.
  KeyBlockLines keys_;
  /// The same across the cuts of one long line (a one-line PEM written with
  /// "\n" escapes, split at the hold): the next piece is masked to its END.
  KeyBlock cut_key_ = KeyBlock::kNone;
  std::size_t cut_pieces_ = 0;
};

}  // namespace mcpcell
