#pragma once
// The variable names of a dotenv file (VS Code's "envFile"): NAME=VALUE
// lines, `export ` allowed before NAME, `#` comments, blank lines. Only the
// names are wanted: the client loads the values itself.

#include <string>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// The names in `text`, in order; a NAME that is not [A-Za-z_][A-Za-z0-9_]*
/// is refused, naming its line.
Result<std::vector<std::string>> EnvFileNames(const std::string& text);

}  // namespace mcpcell
