# Shared by the bench scripts (sourced, not run). Finds or builds mcpcell, compiles the C helpers,
# and parses --quick. Everything lands in $BENCH_BUILD (default: <repo>/build-bench), never in src/.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
BENCH_BUILD=${BENCH_BUILD:-$REPO_DIR/build-bench}
BENCH_BIN=$BENCH_BUILD/bench-bin
NODE_MODULES=${NODE_MODULES:-$REPO_DIR/tests/e2e/node_modules}
QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    *) echo "bench: unknown argument '$arg' (only --quick)" >&2; exit 2 ;;
  esac
done

bench_log() { echo "bench: $*" >&2; }

# MCPCELL: taken from the environment when set, else built (Release) into $BENCH_BUILD.
ensure_mcpcell() {
  if [[ -n "${MCPCELL:-}" ]]; then
    [[ -x "$MCPCELL" ]] || { echo "bench: MCPCELL=$MCPCELL is not executable" >&2; exit 2; }
    return
  fi
  MCPCELL=$BENCH_BUILD/mcpcell
  if [[ ! -x "$MCPCELL" ]]; then
    bench_log "building mcpcell (Release) in $BENCH_BUILD"
    cmake -S "$REPO_DIR" -B "$BENCH_BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
    make -C "$BENCH_BUILD" -j"$(nproc)" mcpcell >/dev/null
  fi
  export MCPCELL
}

# The helpers live under $BENCH_BIN, which a cell gets automatically (the server's own directory).
ensure_helpers() {
  mkdir -p "$BENCH_BIN"
  local cflags=(-O2 -Wall -Wextra -Wconversion -Werror)
  cc "${cflags[@]}" -o "$BENCH_BIN/launch_time" "$BENCH_DIR/launch_time.c"
  cc "${cflags[@]}" -o "$BENCH_BIN/phase_time" "$BENCH_DIR/phase_time.c"
  cc "${cflags[@]}" -pthread -o "$BENCH_BIN/rtt" "$BENCH_DIR/rtt.c"
  cc "${cflags[@]}" -o "$BENCH_BIN/echo_line" "$BENCH_DIR/echo_line.c"
}
