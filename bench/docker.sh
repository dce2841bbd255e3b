#!/usr/bin/env bash
# Container cells vs the engine's own `docker run`, in one run (issue 4's benchmark):
#  - launch of /bin/true: `docker run --rm --network none` vs mcpcell's docker cell, and the same
#    with the runsc runtime (gVisor) when the engine has it, and `podman run` vs mcpcell's podman
#    cell when Podman's API service answers;
#  - stdio: round trip of a 45-byte line and throughput of pipelined 1 KiB lines through
#    `docker run -i` (attach) vs mcpcell's docker cell (FIFO path) and gVisor cell (attach path).
# Needs a running dockerd (scripts/docker.sh starts one) and root. Prints Markdown on stdout.
#   bench/docker.sh [--quick]        (MCPCELL=path to use a given binary)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell
ensure_helpers

RUNS=40 WARMUP=3 ROUNDTRIPS=5000 TOTAL_MIB=64 REPS=3
(( QUICK )) && RUNS=3 WARMUP=1 ROUNDTRIPS=200 TOTAL_MIB=4 REPS=1

docker info >/dev/null 2>&1 || { echo "bench/docker.sh: no docker engine answers (start one: scripts/docker.sh)" >&2; exit 1; }
# The image mcpcell imports for itself (an empty rootfs); one cell run creates it.
"$MCPCELL" run --isolate=docker -- /bin/true </dev/null
# The same view of the host that mcpcell's cell gets: the runtime dirs read-only, no network.
BIND=(-v /usr:/usr:ro -v /lib:/lib:ro -v /lib64:/lib64:ro -v /bin:/bin:ro -v "$BENCH_BIN:$BENCH_BIN:ro")
RUNSC=0
docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"' && RUNSC=1

launch=(
  "docker run --rm --network none" docker run --rm --network none "${BIND[@]}" mcpcell-base:1 /bin/true
  :: "mcpcell run --isolate=docker" "$MCPCELL" run --isolate=docker -- /bin/true
)
if (( RUNSC )); then
  launch+=(:: "docker run --rm --network none --runtime runsc" docker run --rm --network none --runtime runsc
           "${BIND[@]}" mcpcell-base:1 /bin/true
           :: "mcpcell run --isolate=gvisor" "$MCPCELL" run --isolate=gvisor -- /bin/true)
fi
# Podman (when its API service answers, scripts/docker.sh ensure_podman): the
# CLI's own `podman run` with runc and the same ulimits mcpcell's create body
# sets (this host's hard limits refuse Podman's defaults), vs mcpcell's podman cell.
PODMAN_SOCK=${PODMAN_SOCK:-/run/podman/podman.sock}
PODMAN=0
if command -v podman >/dev/null 2>&1 &&
   curl -fsS --max-time 2 --unix-socket "$PODMAN_SOCK" http://localhost/_ping >/dev/null 2>&1; then
  PODMAN=1
  "$MCPCELL" run --isolate=podman -- /bin/true </dev/null  # imports the base image into Podman's store
fi
PODMAN_RUN=(podman --runtime runc run --rm --network none --ulimit nofile=4096:4096 --ulimit nproc=512:512
            "${BIND[@]}" docker.io/library/mcpcell-base:1)
if (( PODMAN )); then
  launch+=(:: "podman run --rm --network none (runc)" "${PODMAN_RUN[@]}" /bin/true
           :: "mcpcell run --isolate=podman" "$MCPCELL" run --isolate=podman -- /bin/true)
fi
bench_log "docker launch: $RUNS runs per config"
echo "## Container launch of /bin/true"
echo
"$BENCH_BIN/launch_time" "$RUNS" "$WARMUP" "${launch[@]}"
echo

stdio=(
  "docker run -i (attach)" docker run -i --rm --network none "${BIND[@]}" mcpcell-base:1 "$BENCH_BIN/echo_line"
  :: "mcpcell --isolate=docker (FIFO stdio)" "$MCPCELL" run --isolate=docker -- "$BENCH_BIN/echo_line"
)
if (( RUNSC )); then
  stdio+=(:: "mcpcell --isolate=gvisor (attach stdio)" "$MCPCELL" run --isolate=gvisor -- "$BENCH_BIN/echo_line")
fi
if (( PODMAN )); then
  stdio+=(:: "podman run -i (attach)" podman --runtime runc run -i --rm --network none --ulimit nofile=4096:4096
          --ulimit nproc=512:512 "${BIND[@]}" docker.io/library/mcpcell-base:1 "$BENCH_BIN/echo_line"
          :: "mcpcell --isolate=podman (FIFO stdio)" "$MCPCELL" run --isolate=podman -- "$BENCH_BIN/echo_line")
fi
bench_log "docker stdio: $ROUNDTRIPS round trips, $REPS x $TOTAL_MIB MiB per config"
echo "## stdio through container cells vs docker attach"
echo
"$BENCH_BIN/rtt" "$ROUNDTRIPS" 45 "$TOTAL_MIB" 1024 "$REPS" "${stdio[@]}"
