#!/usr/bin/env bash
# Runs every benchmark in one go on this machine and writes bench/RESULTS.md (replaced, not appended:
# one current table per benchmark). With --quick: a few iterations only, to prove the scripts work;
# the output then goes to $BENCH_BUILD/RESULTS-quick.md and bench/RESULTS.md is left alone.
#   bench/run_all.sh [--quick]       (MCPCELL=path, BENCH_BUILD=dir, NODE_MODULES=dir)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell
ensure_helpers

quick_flag=()
out=$BENCH_DIR/RESULTS.md
if (( QUICK )); then
  quick_flag=(--quick)
  out=$BENCH_BUILD/RESULTS-quick.md
fi

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
commit=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$REPO_DIR" status --porcelain -- src 2>/dev/null | grep -q . && echo " (src/ has uncommitted changes)" || true)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "# mcpcell benchmarks"
  echo
  echo "Written by \`bench/run_all.sh${quick_flag:+ --quick}\`; every number below comes from one run on one machine."
  echo "Medians are the figures to compare; the ratios are between configs measured in the same run."
  echo
  echo "- date: $(date -u)"
  echo "- machine: $(nproc) CPUs, $cpu, kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "- user: $(id -un) (uid $(id -u)); mcpcell commit $commit$dirty, $MCPCELL"
  echo "- load average at start: $load_before (other work on the machine inflates absolute times)"
  echo "- bwrap $(bwrap --version 2>/dev/null | awk '{print $2}'), node $(node --version)"
  echo
  echo "## Launch of /bin/true"
  echo
  echo "Spawn to reaped exit, runs interleaved across configs. As root the default mcpcell run also"
  echo "creates memory and pids cgroups (defaults 1g / 512), so both mcpcell rows take the cgroup path."
  echo
  bash "$BENCH_DIR/launch.sh" "${quick_flag[@]}"
  echo
  echo "## Launch phases"
  echo
  echo "From \`MCPCELL_TRACE_PHASES\` (src/util/phase_trace.h): each phase's median time since spawn, the"
  echo "median wall step from the phase before it, and the CPU its process spent in that step (which the"
  echo "machine's other load moves far less than wall time). Processes: the supervisor, the cell's PID 1"
  echo "(init-*, rootfs-*) and the server before its execve (server-execve)."
  echo
  bash "$BENCH_DIR/launch_phases.sh" "${quick_flag[@]}"
  echo
  echo "## Spawn → initialize reply of server-everything"
  echo
  echo "From spawn to the initialize result line on stdout (node $(node --version), same small environment for both)."
  echo
  bash "$BENCH_DIR/init.sh" "${quick_flag[@]}"
  echo
  echo "## stdio through a cell vs a bare pipe"
  echo
  echo "Against \`bench/echo_line.c\`: a 45-byte JSON-RPC line sent and its echo awaited before the next;"
  echo "then 1 KiB lines pipelined (64 KiB writes) while the echo is read, timed after one warm-up round trip."
  echo
  bash "$BENCH_DIR/stdio.sh" "${quick_flag[@]}"
  echo
  bash "$BENCH_DIR/egress.sh" "${quick_flag[@]}"; echo # prints its own "## Egress proxy" section
  echo "Load average at end: $(cut -d' ' -f1-3 /proc/loadavg)."
} >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
bench_log "wrote $out"
cat "$out"
