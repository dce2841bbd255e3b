#!/usr/bin/env bash
# Launch of /bin/true: bare, bwrap --unshare-all, unshare -Urnmpf, mcpcell's native cell (relay on
# and off), mcpcell's process start alone (--version), and (as root) mcpcell with explicit
# --memory/--pids. Interleaved runs; prints one Markdown table on stdout.
#   bench/launch.sh [--quick]        (MCPCELL=path to use a given binary)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell
ensure_helpers

RUNS=200 WARMUP=10
(( QUICK )) && RUNS=5 WARMUP=1

configs=(
  bare /bin/true
  :: bwrap bwrap --unshare-all --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib
     --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp -- /bin/true
  :: "unshare -Urnmpf --mount-proc" unshare -Urnmpf --mount-proc /bin/true
  :: "mcpcell run --isolate" "$MCPCELL" run --isolate -- /bin/true
  :: "mcpcell run --isolate --relay=off" "$MCPCELL" run --isolate --relay=off -- /bin/true
  :: "mcpcell --version (process start alone)" "$MCPCELL" --version
)
if [[ $(id -u) == 0 ]]; then
  configs+=(:: "mcpcell run --isolate --memory 512m --pids 128 (root, cgroups)"
            "$MCPCELL" run --isolate --memory 512m --pids 128 -- /bin/true)
fi
bench_log "launch: $RUNS runs per config"
"$BENCH_BIN/launch_time" "$RUNS" "$WARMUP" "${configs[@]}"
