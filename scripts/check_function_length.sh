#!/usr/bin/env bash
# Fails when a function in src/ is 80 lines or longer (docs/ARCHITECTURE.md,
# "Function length"): small functions, named steps. Prints file:line, the
# length and the name of each. Run by scripts/test.sh; no build needed.
#
# The parser is Universal Ctags (Debian universal-ctags), whose C++ parser
# gives each function definition its first and last line (--fields=+ne):
# free functions, member functions defined inside or outside their class,
# constructors, operators. Its limits, which this check inherits:
#  - a lambda is part of the function that holds it (it has no tag of its
#    own), so a long lambda makes its enclosing function long — as it reads;
#  - a function whose definition a macro writes, or that the parser cannot
#    follow (exotic template syntax), is not measured;
#  - a class's length is not a function's: a long class passes.
# Length is end - start + 1: the signature's first line to the closing brace.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT=80
if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  echo "check_function_length: needs Universal Ctags (apt-get install universal-ctags)" >&2
  exit 2
fi

long=$(ctags -R --languages=C++ --langmap=C++:+.h --c++-kinds=f --fields=+ne -o - src |
  awk -F'\t' -v limit="$LIMIT" '
    { line = ""; end = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) line = substr($i, 6)
        if ($i ~ /^end:/) end = substr($i, 5)
      }
      if (line != "" && end != "" && end - line + 1 >= limit)
        printf "%s:%d: %s is %d lines (limit: under %d)\n", $2, line, $1, end - line + 1, limit }' |
  sort)
functions=$(ctags -R --languages=C++ --langmap=C++:+.h --c++-kinds=f --fields=+ne -o - src | grep -c 'end:' || true)
if [ -n "$long" ]; then
  echo "$long"
  echo "check_function_length: split these into named steps (docs/ARCHITECTURE.md)"
  exit 1
fi
echo "check_function_length: all $functions functions in src/ are under $LIMIT lines"
