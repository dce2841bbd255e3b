#!/usr/bin/env bash
# The secret scan (src/guard/): speed against Vectorscan's own rate in the same
# run, and false findings per MB over Debian's own text (/usr/share/doc and
# /usr/share/man, .gz decompressed). Prints markdown for bench/RESULTS.md.
# Usage: bench/secret_scan.sh [--quick]   (--quick: 20 MB of text only)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUILD=${SECRET_BENCH_BUILD:-$REPO_DIR/build}
cmake -S "$REPO_DIR" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j2 --target secret_bench >/dev/null

CORPUS=$BENCH_BUILD/debian-text.txt
mkdir -p "$BENCH_BUILD"
if [[ ! -s "$CORPUS" ]]; then
  bench_log "collecting Debian text into $CORPUS"
  {
    find /usr/share/doc /usr/share/man -type f -name '*.gz' -print0 | xargs -0 -r zcat -f 2>/dev/null
    # Plain files that grep calls text (-I skips binary ones).
    find /usr/share/doc /usr/share/man -type f ! -name '*.gz' -print0 | xargs -0 -r grep -Il '' 2>/dev/null |
      tr '\n' '\0' | xargs -0 -r cat
  } >"$CORPUS"
fi
INPUT=$CORPUS
if [[ $QUICK == 1 ]]; then
  INPUT=$BENCH_BUILD/debian-text-quick.txt
  head -c 20000000 "$CORPUS" >"$INPUT"
fi

echo "## Secret scan ($(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "### Speed"
echo
"$BUILD/secret_bench" speed "$INPUT"
echo
echo "### False findings on Debian text"
echo
"$BUILD/secret_bench" fp "$INPUT" 2>"$BENCH_BUILD/secret-findings.txt"
echo
echo "(each finding with its context: $BENCH_BUILD/secret-findings.txt)"
