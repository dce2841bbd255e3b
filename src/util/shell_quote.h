#pragma once
// Words for sh(1): what mcpcell prints for a user to paste, and the
// programs it writes for a cell's /bin/sh (source/lifecycle.h).

#include <string>

namespace mcpcell {

/// `s` as one sh word: as it is when it holds only characters sh never
/// treats specially, else in single quotes ('\'' for a quote). Any byte
/// but NUL survives (a newline too); an empty string is ''.
std::string ShellQuote(const std::string& s);

}  // namespace mcpcell
