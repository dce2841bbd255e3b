#!/usr/bin/env bash
# Fails on an include that goes up or sideways between the modules of src/
# (docs/ARCHITECTURE.md, "Layers"): a file may include its own module and
# modules of a LOWER layer only, so the modules cannot form a cycle. Prints
# file:line of each offending include. Run by scripts/test.sh; no build needed.
set -euo pipefail
cd "$(dirname "$0")/.."

# layer  modules (directories under src/); files directly in src/ (main.cc) are the top.
# Modules on one line are siblings: neither may include the other.
LAYERS='
0 util
1 audit source
2 guard client
3 core
4 egress relay
5 profile
6 registry
7 policy
8 cell
9 doctor
10 cli
'

declare -A rank=()
while read -r n mods; do
  for m in $mods; do rank[$m]=$n; done
done <<<"$LAYERS"

bad=0
for dir in src/*/; do
  m=$(basename "$dir")
  [ -n "${rank[$m]:-}" ] || { echo "check_layers: src/$m/ is in no layer: add it to LAYERS in $0"; bad=1; }
done
while IFS=: read -r file line text; do
  from=${file#src/}
  from=${from%%/*}
  to=${text#*\"}
  to=${to%%/*}
  [ -n "${rank[$to]:-}" ] || continue              # not a module of src/ (a third-party header)
  [[ $file == src/*/* ]] || continue                # src/main.cc: the top, may include anything
  [ -n "${rank[$from]:-}" ] || continue             # a module in no layer: reported above
  [ "$from" != "$to" ] || continue
  if [ "${rank[$to]}" -ge "${rank[$from]}" ]; then
    echo "$file:$line: $from/ (layer ${rank[$from]}) includes $to/ (layer ${rank[$to]}): ${text}"
    bad=1
  fi
done < <(grep -rn --include='*.h' --include='*.cc' -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]+/' src)
[ "$bad" = 0 ] && echo "check_layers: every include goes down a layer"
exit "$bad"
