#!/usr/bin/env bash
# Two mcpcell binaries' relay, interleaved in one run (a before/after of a change), next to what
# the relay's plumbing alone costs: BASE=path NEW=path bench/relay_compare.sh [--quick] [ROUNDS]
#   bare pipe                        the client's pipes straight to mcp_answer
#   bare + 2 hops (pipe_hops)        the same with a two-thread raw copier in between: the two extra
#                                    pipe hops and wake-ups the relay adds (--relay=off adds none:
#                                    the cell then reads and writes the client's own pipes)
#   --relay=off, relay on, relay on + deny rules + --audit-log, for BASE and NEW
# Every round runs bench/rtt.c over all configs (round trips of a 68-byte tools/call, then 1 KiB
# notifications pipelined); rounds repeat, so each config is measured between the others.
# Prints each round's tables and the load average; no thresholds.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_helpers
: "${BASE:?BASE=path of the mcpcell binary before}" "${NEW:?NEW=path of the mcpcell binary after}"
cc -O2 -Wall -Wextra -Wconversion -Werror -o "$BENCH_BIN/mcp_answer" "$BENCH_DIR/mcp_answer.c"
cc -O2 -Wall -Wextra -Wconversion -Werror -pthread -o "$BENCH_BIN/pipe_hops" "$BENCH_DIR/pipe_hops.c"
ROUNDS=${ROUNDS:-3} ROUNDTRIPS=10000 TOTAL_MIB=128 REPS=3
(( QUICK )) && ROUNDS=1 ROUNDTRIPS=500 TOTAL_MIB=8 REPS=1
work=$(mktemp -d /tmp/bench-relay-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
printf '{"mcpcell": {"tools": {"deny": ["write_*", "move_file"]}}}\n' >"$work/deny.json"
answer=$BENCH_BIN/mcp_answer
for ((r = 1; r <= ROUNDS; r++)); do
  echo "round $r: load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC"
  echo
  rm -f "$work"/*.jsonl
  RTT_SHAPE=call "$BENCH_BIN/rtt" "$ROUNDTRIPS" 68 "$TOTAL_MIB" 1024 "$REPS" \
    "bare pipe" "$answer" \
    :: "bare + 2 hops (pipe_hops)" "$BENCH_BIN/pipe_hops" "$answer" \
    :: "--relay=off (base)" "$BASE" run --isolate --relay=off -- "$answer" \
    :: "--relay=off (new)" "$NEW" run --isolate --relay=off -- "$answer" \
    :: "relay on (base)" "$BASE" run --isolate -- "$answer" \
    :: "relay on (new)" "$NEW" run --isolate -- "$answer" \
    :: "relay on + deny + --audit-log (base)" "$BASE" run --isolate --permission-profile "$work/deny.json" \
       --audit-log "$work/base.jsonl" -- "$answer" \
    :: "relay on + deny + --audit-log (new)" "$NEW" run --isolate --permission-profile "$work/deny.json" \
       --audit-log "$work/new.jsonl" -- "$answer"
  echo
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC"
