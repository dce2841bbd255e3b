#!/usr/bin/env bash
# stdio through a cell vs a bare pipe: sequential round trips of a 45-byte JSON-RPC line, and the
# throughput of pipelined 1 KiB lines, against bench/echo_line.c. Prints Markdown tables on stdout.
#   bench/stdio.sh [--quick]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell
ensure_helpers

ROUNDTRIPS=20000 TOTAL_MIB=256 REPS=5
(( QUICK )) && ROUNDTRIPS=200 TOTAL_MIB=4 REPS=1
bench_log "stdio: $ROUNDTRIPS round trips, $REPS x $TOTAL_MIB MiB per config"
"$BENCH_BIN/rtt" "$ROUNDTRIPS" 45 "$TOTAL_MIB" 1024 "$REPS" \
  "bare pipe" "$BENCH_BIN/echo_line" \
  :: "mcpcell run --isolate" "$MCPCELL" run --isolate -- "$BENCH_BIN/echo_line"
