#!/usr/bin/env bash
# The MCP-aware relay's cost (issue 17): a tools/call round trip and 1 KiB-line throughput through a
# native cell with the relay on (the default) vs --relay=off vs a bare pipe; a 24 MiB line through
# the relay vs the raw copy; the supervisor's peak RSS; then, when built (cmake --build build --target
# relay_bench), the relay's own CPU per message, memory and the overlap of its two directions in
# process (bench/relay_bench.cc), which hold on a loaded machine where the wall-clock figures do
# not. Prints Markdown on stdout, with the load average at start and end. No thresholds.
#   bench/relay.sh [--quick]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell
ensure_helpers
cc -O2 -Wall -Wextra -Wconversion -Werror -o "$BENCH_BIN/mcp_answer" "$BENCH_DIR/mcp_answer.c"

ROUNDTRIPS=20000 TOTAL_MIB=256 REPS=5 BIG_REPS=7
(( QUICK )) && ROUNDTRIPS=500 TOTAL_MIB=16 REPS=1 BIG_REPS=3
bench_log "relay: $ROUNDTRIPS round trips, $REPS x $TOTAL_MIB MiB per config"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC, $(nproc) CPUs"
echo
# What issue 17 asks the round trip to be measured with: parsing, a tool filter and the audit
# log on (every call one hash-chained record, written with one write(2)).
work_audit=$(mktemp -d /tmp/bench-relay-audit.XXXXXX)
chmod 0755 "$work_audit"
printf '{"mcpcell": {"tools": {"deny": ["write_*", "move_file"]}}}\n' >"$work_audit/deny.json"
# tools/call for the round trips (answered by mcp_answer), notifications for the throughput.
RTT_SHAPE=call "$BENCH_BIN/rtt" "$ROUNDTRIPS" 68 "$TOTAL_MIB" 1024 "$REPS" \
  "bare pipe" "$BENCH_BIN/mcp_answer" \
  :: "cell, --relay=off (raw copy)" "$MCPCELL" run --isolate --relay=off -- "$BENCH_BIN/mcp_answer" \
  :: "cell, relay on (parse, judge, ids)" "$MCPCELL" run --isolate -- "$BENCH_BIN/mcp_answer" \
  :: "cell, relay on + deny rules + --audit-log" "$MCPCELL" run --isolate --permission-profile "$work_audit/deny.json" \
     --audit-log "$work_audit/calls.jsonl" -- "$BENCH_BIN/mcp_answer"
rm -rf "$work_audit"

# One 24 MiB notification line into `cat` and back, minus the same run with a 1-line message:
# the line's own cost through the relay (parsed and validated in both directions) or the raw copy.
work=$(mktemp -d /tmp/bench-relay.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
python3 - "$work" <<'PY'
import sys, json
d = sys.argv[1]
open(f"{d}/big", "w").write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                        "params": {"data": "a" * (24 << 20)}}) + "\n")
open(f"{d}/small", "w").write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message"}) + "\n")
PY
run_once() {  # relay-flag input → seconds, and the peak RSS (KiB) in $work/rss
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$work/rss" "$MCPCELL" run --isolate $1 --read "$work" -- /bin/cat <"$work/$2" >"$work/out"
  end=$(date +%s.%N)
  cmp -s "$work/out" "$work/$2" || { echo "bench: $1: the line came back changed" >&2; exit 1; }
  echo "$end - $start" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo
echo "| 24 MiB line, one way in and one way out (median of $BIG_REPS, minus a 1-line run) | seconds | supervisor peak RSS MiB |"
echo "| --- | ---: | ---: |"
for flag in "--relay=off" "--relay=on"; do
  big=() small=() rss=()
  for ((i = 0; i < BIG_REPS; i++)); do
    big+=("$(run_once "$flag" big)"); rss+=("$(cat "$work/rss")")
    small+=("$(run_once "$flag" small)")
  done
  b=$(printf '%s\n' "${big[@]}" | median) s=$(printf '%s\n' "${small[@]}" | median)
  r=$(printf '%s\n' "${rss[@]}" | median)
  printf '| %s | %.3f | %.1f |\n' "$flag" "$(echo "$b - $s" | bc -l)" "$(echo "$r / 1024" | bc -l)"
done

RELAY_BENCH=${RELAY_BENCH:-$REPO_DIR/build/relay_bench}
if [[ -x $RELAY_BENCH ]]; then
  echo
  "$RELAY_BENCH" cpu "$REPS"
  echo
  # Whether the two directions overlap (the relay's lock; 2.0 is two free cores' worth).
  "$RELAY_BENCH" duplex 30000 redact "$REPS"
  echo
  "$RELAY_BENCH" rss
else
  bench_log "no $RELAY_BENCH (cmake --build build --target relay_bench): in-process figures left out"
fi
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC"
