#pragma once
// A private key printed over several lines (a PEM, OpenSSH or PGP block; a
// PuTTY key file), read line by line: the private-key-block rule needs the
// header and the body in one text, and a text scanned a line at a time (the
// server's stderr, cell/stderr_redact.h; its plain stdout lines, the relay's
// GuardPlainText) never holds both. KeyBlockLines follows the block from the
// line after its header to its END line (PuTTY: Private-MAC), so its caller
// masks the lines between; past kMaxKeyBlockLines of them only while they
// are base64, so a block that never ends does not mask the rest of a run.

#include <cstddef>
#include <string_view>

namespace mcpcell {

/// Which kind of private key block is open, so what closes it.
enum class KeyBlock { kNone, kPem, kPutty, kSsh2 };

/// An RSA 16384-bit key is ~200 lines of 64 bytes; past this many lines a
/// block is followed only while its lines are base64 (PGP keys with subkeys).
inline constexpr std::size_t kMaxKeyBlockLines = 256;

/// A private key's header with no end after it on the same line, so its body
/// follows: "-----BEGIN ... PRIVATE KEY-----" (PEM, OpenSSH, "PRIVATE KEY
/// BLOCK" of PGP) before an "-----END"; a PuTTY key file's first line before
/// its "Private-MAC:"; an SSH2 (RFC 4716) "---- BEGIN SSH2 ... PRIVATE KEY ----".
KeyBlock OpensKeyBlock(std::string_view line);
/// What ends a block of kind `key` ("-----END", "Private-MAC:", "---- END SSH2").
std::string_view KeyBlockEnd(KeyBlock key);
/// A line of a key's body: base64 (a PGP armor's checksum "=AbCd" too),
/// indented or not.
bool IsBase64Line(std::string_view line);

class KeyBlockLines {
 public:
  /// Reads one whole line (no newline). True: the line is a body line of the
  /// open block, to be masked whole. False: the caller scans it as usual; a
  /// line with an END closes the block, one with a header opens one for the
  /// lines after it.
  bool Body(std::string_view line);
  /// Reads part of a line (flushed before its end; the rest comes as a whole
  /// line): npos when it is not inside a block, else the offset of the END in
  /// it (to mask what lies before), or its size when it is body throughout.
  std::size_t BodyPart(std::string_view part);
  KeyBlock open() const { return open_; }
  /// A block carried over from elsewhere (a key split by a cut of a long line).
  void Open(KeyBlock key) {
    open_ = key;
    lines_ = 0;
  }

 private:
  KeyBlock open_ = KeyBlock::kNone;
  std::size_t lines_ = 0;
};

}  // namespace mcpcell
