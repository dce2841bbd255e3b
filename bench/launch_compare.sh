#!/usr/bin/env bash
# Two mcpcell binaries' launch of /bin/true, interleaved with bare and bwrap in one run (a before/after
# of a change): BASE=path NEW=path bench/launch_compare.sh [--quick]. Prints one Markdown table.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_helpers
: "${BASE:?BASE=path of the mcpcell binary before}" "${NEW:?NEW=path of the mcpcell binary after}"
RUNS=150 WARMUP=5
(( QUICK )) && RUNS=5 WARMUP=1
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC"
"$BENCH_BIN/launch_time" "$RUNS" "$WARMUP" \
  bare /bin/true \
  :: "bwrap --unshare-all" bwrap --unshare-all --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
     --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp -- /bin/true \
  :: "mcpcell run --isolate (base)" "$BASE" run --isolate -- /bin/true \
  :: "mcpcell run --isolate (new)" "$NEW" run --isolate -- /bin/true \
  :: "--relay=off (base)" "$BASE" run --isolate --relay=off -- /bin/true \
  :: "--relay=off (new)" "$NEW" run --isolate --relay=off -- /bin/true
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
