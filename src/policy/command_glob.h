#pragma once
// Matching a trusted_sources glob against a source. A command source is
// matched word by word (adv10: "command:///usr/bin/*" matched
// "/usr/bin/node -e CODE" whole), its words split as sh splits them; the
// glob comes from a policy file and the source from the command line, so
// both splits read bytes mcpcell did not write (fuzz/shell_words_fuzz.cc).

#include <string>
#include <vector>

namespace mcpcell {

/// fnmatch(3) without FNM_PATHNAME: '*' also matches '/', so "npx://@scope/*" works.
bool GlobMatch(const std::string& glob, const std::string& text);

/// `s`'s words, as sh splits them: blanks (space, tab) separate, single and
/// double quotes group (nothing is special inside them), a backslash outside
/// quotes takes the next byte. An unclosed quote runs to the end.
std::vector<std::string> ShellWords(const std::string& s);

/// Whether `source` has as many words as `glob`, each matching its glob word.
bool CommandGlobMatch(const std::string& glob, const std::string& source);

}  // namespace mcpcell
