#!/usr/bin/env bash
# Where one launch of `mcpcell run --isolate -- /bin/true` spends its time: the phase lines that
# MCPCELL_TRACE_PHASES makes mcpcell print (src/util/phase_trace.h), from spawn to reaped exit, as
# medians over many runs. Then the same with node_modules granted (--read), the launch of a Node
# server. Prints Markdown on stdout.
#   bench/launch_phases.sh [--quick]        (MCPCELL=path to use a given binary)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell
ensure_helpers

RUNS=100 WARMUP=5
(( QUICK )) && RUNS=3 WARMUP=1
bench_log "launch phases: $RUNS runs"
echo "\`mcpcell run --isolate -- /bin/true\`:"
echo
"$BENCH_BIN/phase_time" "$RUNS" "$WARMUP" "$MCPCELL" run --isolate -- /bin/true
if [[ -d $NODE_MODULES ]]; then
  echo
  echo "The same with \`--read $(basename "$NODE_MODULES")\` ($(find "$NODE_MODULES" | wc -l) entries; the server-everything launch grants it):"
  echo
  "$BENCH_BIN/phase_time" "$RUNS" "$WARMUP" "$MCPCELL" run --isolate --read "$NODE_MODULES" -- /bin/true
fi
