#!/usr/bin/env bash
# stdio through a cell vs a bare pipe: sequential round trips of a 45-byte JSON-RPC line, and the
# throughput of pipelined 1 KiB lines, against bench/echo_line.c, with the raw copy (--relay=off: the
# echo of a request is no answer to the relay; bench/relay.sh measures the relay). Markdown on stdout.
#   bench/stdio.sh [--quick]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell
ensure_helpers

ROUNDTRIPS=20000 TOTAL_MIB=256 REPS=5
(( QUICK )) && ROUNDTRIPS=200 TOTAL_MIB=4 REPS=1
bench_log "stdio: $ROUNDTRIPS round trips, $REPS x $TOTAL_MIB MiB per config"
"$BENCH_BIN/rtt" "$ROUNDTRIPS" 45 "$TOTAL_MIB" 1024 "$REPS" \
  "bare pipe" "$BENCH_BIN/echo_line" \
  :: "mcpcell run --isolate --relay=off" "$MCPCELL" run --isolate --relay=off -- "$BENCH_BIN/echo_line"
