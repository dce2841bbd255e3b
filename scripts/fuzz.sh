#!/usr/bin/env bash
# Runs the libFuzzer targets in fuzz/ (docs/FUZZING.md), one at a time.
#
#   scripts/fuzz.sh build                  clang build in build-fuzz/ (MCPCELL_FUZZ=ON)
#   scripts/fuzz.sh run SECONDS [TARGET..] each target for SECONDS on its seed corpus
#
# A run starts from fuzz/corpus/<target>/ (never written to: new inputs go to a
# temp dir, removed at the end unless FUZZ_KEEP=DIR names where to keep them)
# and fails on any crash, leak, timeout or out-of-memory; the input that did it
# is saved as FUZZ_ARTIFACTS/<target>-crash-... (default: a temp dir, printed).
# One line per target: "fuzz: TARGET runs=N cov=C ft=F corpus=K time=Ss PASS|FAIL".
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_DIR=${FUZZ_DIR:-build-fuzz}

fuzz_build() {
  cmake -S . -B "$FUZZ_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCPCELL_FUZZ=ON -DMCPCELL_WERROR=OFF \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang >/dev/null
  cmake --build "$FUZZ_DIR" -j "$(nproc)" --target fuzz >&2
}

all_targets() {
  local src
  for src in fuzz/*_fuzz.cc; do basename "$src" _fuzz.cc; done
}

# $1 target, $2 seconds, $3 dir for new inputs, $4 artifact dir.
fuzz_one() {
  local t=$1 secs=$2 work=$3 art=$4 log rc=0 start=$SECONDS
  local args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
              -artifact_prefix="$art/$t-")
  [ ! -f "fuzz/$t.dict" ] || args+=(-dict="fuzz/$t.dict")
  mkdir -p "$work/$t"
  log=$(mktemp)
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$FUZZ_DIR/fuzz/${t}_fuzz" "${args[@]}" "$work/$t" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  local runs cov ft corp
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corp=$(find "$work/$t" -type f | wc -l)
  local verdict=PASS
  if [ "$rc" != 0 ]; then
    verdict=FAIL
    grep -E 'ERROR|SUMMARY|^ +#[0-9]+ ' "$log" | head -40 >&2 || true
  fi
  echo "fuzz: $t runs=${runs:-?} cov=${cov:-?} ft=${ft:-?} corpus=$corp time=$((SECONDS - start))s $verdict"
  rm -f "$log"
  [ "$rc" = 0 ]
}

fuzz_run() {
  local secs=$1
  shift
  local targets=("$@")
  [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(all_targets)
  local work art failed=0 t
  work=${FUZZ_KEEP:-$(mktemp -d /tmp/fuzz-corpus.XXXXXX)}
  art=${FUZZ_ARTIFACTS:-$(mktemp -d /tmp/fuzz-artifacts.XXXXXX)}
  mkdir -p "$work" "$art"  # libFuzzer refuses an -artifact_prefix directory that does not exist
  for t in "${targets[@]}"; do
    fuzz_one "$t" "$secs" "$work" "$art" || failed=1
  done
  [ -n "${FUZZ_KEEP:-}" ] || rm -rf "$work"
  if [ "$failed" = 0 ]; then
    [ -n "${FUZZ_ARTIFACTS:-}" ] || rm -rf "$art"
  else
    echo "fuzz: crashing inputs are in $art" >&2
  fi
  return "$failed"
}

case "${1:-}" in
  build) fuzz_build ;;
  run) shift; fuzz_run "$@" ;;
  *) echo "usage: $0 build | run SECONDS [TARGET...]" >&2; exit 2 ;;
esac
