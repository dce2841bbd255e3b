#!/usr/bin/env bash
# Egress proxies in one run against the same loopback upstream (bench/egress_load.c serve): direct
# (no proxy), Squid, tinyproxy and `mcpcell egress-proxy`, each allowed CONNECT to the upstream's
# one port only. Measures (a) new tunnel + 1 KiB GET latency, (b) 1 GiB through one tunnel,
# (c) requests/s with 200 concurrent clients each opening a new tunnel per request, (d) the proxy's
# RSS idle and with 900 idle tunnels. Prints a Markdown section ("## Egress proxy") on stdout.
#   bench/egress.sh [--quick]        (MCPCELL=path to use a given binary; MCPCELL_BASE=path adds
#                                     a second build, e.g. main's, as row "mcpcell base" in the same run)
# Installs squid/tinyproxy with apt-get when missing; starts every process itself (no systemd) and
# kills them all on exit.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Latency alternates configs request by request (as many rounds as requests): the load of this
# shared machine comes in bursts of seconds, and only fine interleaving makes it hit every config
# alike (with 20 rounds of 50, the p50 ratio to Squid moved between 0.4 and 0.9 from run to run).
LAT_N=1000 BULK_BYTES=$((1 << 30)) BULK_REPS=3 RPS_CONC=200 RPS_SECS=1 RPS_ROUNDS=6
IDLE_TUNNELS=900
if (( QUICK )); then
  LAT_N=100 BULK_BYTES=$((64 << 20)) BULK_REPS=1 RPS_SECS=1 RPS_ROUNDS=1 IDLE_TUNNELS=100
fi
LAT_ROUNDS=$LAT_N

install_proxies() {
  local missing=() p
  for p in squid tinyproxy; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  (( ${#missing[@]} == 0 )) && return
  bench_log "egress: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # The packages' own services are not ours: policy-rc.d answer 101 keeps them from starting.
  local rc_d=/usr/sbin/policy-rc.d created=0
  if [[ ! -e $rc_d ]]; then printf '#!/bin/sh\nexit 101\n' >"$rc_d" && chmod 755 "$rc_d" && created=1; fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || { (( created )) && rm -f "$rc_d"; exit 2; }
  (( created )) && rm -f "$rc_d"
  return 0
}

install_proxies
ensure_mcpcell
mkdir -p "$BENCH_BIN"
cc -O2 -Wall -Wextra -Wconversion -Werror -o "$BENCH_BIN/egress_load" "$BENCH_DIR/egress_load.c"
LOAD=$BENCH_BIN/egress_load

WORK=$(mktemp -d /tmp/mcpcell-egress-bench.XXXXXX)
chmod 755 "$WORK"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Background a command, remember its pid for cleanup (stdout/stderr to $WORK/<name>.out/.err).
start() {
  local name=$1; shift
  "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PIDS+=($!)
  eval "PID_$name=$!"
}

# Memory in kB of a process and all its descendants (Squid or tinyproxy may fork helpers):
# FIELD is VmRSS (everything resident, shared library pages included) or RssAnon (private memory).
mem_kb() {
  local field=$1 total=0 pid kids; shift
  for pid in "$@"; do
    [[ -r /proc/$pid/status ]] || continue
    total=$(( total + $(awk -v f="$field:" '$1 == f {print $2}' "/proc/$pid/status") ))
    kids=$(cat /proc/"$pid"/task/*/children 2>/dev/null || true)
    [[ -n "$kids" ]] && total=$(( total + $(mem_kb "$field" $kids) ))
  done
  echo "$total"
}
record_mem() { # LABEL WHEN
  echo -e "RESULT\t$1\trss_$2_kb\t$(mem_kb VmRSS "${PID[$1]}")" >>"$RES"
  echo -e "RESULT\t$1\tanon_$2_kb\t$(mem_kb RssAnon "${PID[$1]}")" >>"$RES"
}

# CONNECT through proxy port $1 to target $2 and GET 16 bytes; prints the CONNECT status.
probe() {
  curl -s -o /dev/null --max-time 2 -p -x "http://127.0.0.1:$1" -w '%{http_connect}' "http://$2/bytes/16" || true
}

wait_ready() {
  local name=$1 port=$2 target=$3 pid_var=PID_$1
  for _ in $(seq 100); do
    [[ $(probe "$port" "$target") == 200 ]] && return 0
    kill -0 "${!pid_var}" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench: egress: $name did not answer a CONNECT to $target on 127.0.0.1:$port" >&2
  tail -n 20 "$WORK/$name.err" "$WORK"/"$name"*.log 2>/dev/null >&2 || true
  exit 1
}

# --- upstream and proxies -------------------------------------------------------------------------
start upstream "$LOAD" serve
for _ in $(seq 50); do [[ -s $WORK/upstream.out ]] && break; sleep 0.1; done
UP=$(head -n1 "$WORK/upstream.out")
[[ $UP =~ ^[0-9]+$ ]] || { echo "bench: egress: the upstream did not start" >&2; cat "$WORK/upstream.err" >&2; exit 1; }
[[ $(curl -s --max-time 2 "http://127.0.0.1:$UP/bytes/1024" | wc -c) == 1024 ]] \
  || { echo "bench: egress: the upstream on 127.0.0.1:$UP does not answer" >&2; exit 1; }

fill() { sed -e "s|@PORT@|$1|g" -e "s|@UPSTREAM_PORT@|$UP|g" -e "s|@DIR@|$WORK|g" "$2" >"$3"; }

SQUID_PORT=$("$LOAD" freeport)
fill "$SQUID_PORT" "$BENCH_DIR/egress/squid.conf.in" "$WORK/squid.conf"
touch "$WORK/squid-cache.log"
chown proxy "$WORK/squid-cache.log" 2>/dev/null || chmod 666 "$WORK/squid-cache.log"
start squid squid -N -f "$WORK/squid.conf"

TINY_PORT=$("$LOAD" freeport)
fill "$TINY_PORT" "$BENCH_DIR/egress/tinyproxy.conf.in" "$WORK/tinyproxy.conf"
cp "$BENCH_DIR/egress/tinyproxy-filter" "$WORK/tinyproxy-filter"
start tinyproxy tinyproxy -d -c "$WORK/tinyproxy.conf"

labels=(direct squid tinyproxy)
declare -A PORT=([direct]=$UP [squid]=$SQUID_PORT [tinyproxy]=$TINY_PORT)
declare -A TARGET=([direct]=- [squid]=127.0.0.1:$UP [tinyproxy]=127.0.0.1:$UP)
declare -A PID=()

MCPCELL_NOTE=""
# CLI11 answers --help of an unknown subcommand with the top-level help (on stderr): look in the list.
if "$MCPCELL" --help 2>&1 | grep -qE '^ +egress-proxy( |$)'; then
  MC_PORT=$("$LOAD" freeport)
  start mcpcell "$MCPCELL" egress-proxy --listen "127.0.0.1:$MC_PORT" --allow-host bench.test \
    --allow-port "$UP" --resolve "bench.test:$UP:127.0.0.1"
  labels+=(mcpcell)
  PORT[mcpcell]=$MC_PORT
  TARGET[mcpcell]=bench.test:$UP
else
  MCPCELL_NOTE="\`$MCPCELL egress-proxy\` does not exist in this build: mcpcell's row is missing."
  bench_log "egress: $MCPCELL has no egress-proxy command; measuring direct, squid and tinyproxy only"
fi

wait_ready squid "$SQUID_PORT" "127.0.0.1:$UP"
wait_ready tinyproxy "$TINY_PORT" "127.0.0.1:$UP"
PID[squid]=$PID_squid PID[tinyproxy]=$PID_tinyproxy
if [[ -n ${PORT[mcpcell]:-} ]]; then
  wait_ready mcpcell "$MC_PORT" "bench.test:$UP"
  PID[mcpcell]=$PID_mcpcell
fi
# Another build of mcpcell in the same run (before/after a change), interleaved like the rest.
if [[ -n ${MCPCELL_BASE:-} ]]; then
  BASE_PORT=$("$LOAD" freeport)
  start base "$MCPCELL_BASE" egress-proxy --listen "127.0.0.1:$BASE_PORT" --allow-host bench.test \
    --allow-port "$UP" --resolve "bench.test:$UP:127.0.0.1"
  wait_ready base "$BASE_PORT" "bench.test:$UP"
  labels+=(base)
  PORT[base]=$BASE_PORT TARGET[base]=bench.test:$UP PID[base]=$PID_base
fi

# The floor: egress_load's reference relay, the bare mechanics of a CONNECT proxy without rules,
# DNS, audit or timers. It shows what this machine allows at best, so a goal can be read against it.
start relay "$LOAD" relay "$UP"
for _ in $(seq 50); do [[ -s $WORK/relay.out ]] && break; sleep 0.1; done
labels+=(relay)
PORT[relay]=$(head -n1 "$WORK/relay.out") TARGET[relay]=bench.test:$UP PID[relay]=$PID_relay
wait_ready relay "${PORT[relay]}" "bench.test:$UP"

RES=$WORK/results.tsv
: >"$RES"
configs=()
for l in "${labels[@]}"; do
  (( ${#configs[@]} )) && configs+=(::)
  configs+=("$l" "${PORT[$l]}" "${TARGET[$l]}")
  [[ -n ${PID[$l]:-} ]] && configs+=("pid=${PID[$l]}")
done

# --- (d) RSS idle (after the readiness probes) and with N idle tunnels -----------------------------
sleep 0.5
for l in "${labels[@]:1}"; do
  record_mem "$l" idle
done
bench_log "egress: RSS with $IDLE_TUNNELS idle tunnels"
for l in "${labels[@]:1}"; do
  "$LOAD" idle "$IDLE_TUNNELS" "${PORT[$l]}" "${TARGET[$l]}" >"$WORK/idle.out" 2>"$WORK/idle.err" &
  idle_pid=$!
  PIDS+=("$idle_pid")
  for _ in $(seq 300); do
    grep -q ready "$WORK/idle.out" 2>/dev/null && break
    kill -0 "$idle_pid" 2>/dev/null || break
    sleep 0.1
  done
  if grep -q ready "$WORK/idle.out"; then
    sleep 0.5
    record_mem "$l" tunnels
  else
    bench_log "egress: $l: $IDLE_TUNNELS tunnels could not be opened: $(tail -n 3 "$WORK/idle.err")"
  fi
  kill -TERM "$idle_pid" 2>/dev/null || true
  wait "$idle_pid" 2>/dev/null || true
  sleep 1 # the proxy closes its side of 900 tunnels
done

# --- (a) latency, (b) bulk, (c) requests/s -------------------------------------------------------
bench_log "egress: latency, $LAT_N sequential new tunnels + 1 KiB GET per config"
"$LOAD" latency "$LAT_N" "$LAT_ROUNDS" "${configs[@]}" >>"$RES"
bench_log "egress: bulk, $BULK_REPS x $((BULK_BYTES >> 20)) MiB through one tunnel per config"
"$LOAD" bulk "$BULK_BYTES" "$BULK_REPS" "${configs[@]}" >>"$RES"
bench_log "egress: requests/s, $RPS_CONC concurrent clients, ${RPS_ROUNDS} x ${RPS_SECS} s per config"
"$LOAD" rps "$RPS_CONC" "$RPS_SECS" "$RPS_ROUNDS" "${configs[@]}" >>"$RES"

# Same allow-list: each proxy must refuse a port that is not the upstream's (checked after the
# measurements, so that a proxy that mishandles a denial still gets measured, and the run says so).
NOTES=()
for l in "${labels[@]:1}"; do
  [[ $l == relay ]] && continue # it has no allow-list
  kill -0 "${PID[$l]}" 2>/dev/null || { NOTES+=("$l died during the measurements: $(tail -n 2 "$WORK/$l.err" | tr '\n' ' ')"); continue; }
  code=$(probe "${PORT[$l]}" "${TARGET[$l]%:*}:$(( UP == 65535 ? 1 : UP + 1 ))")
  sleep 0.2
  if [[ $code == 200 ]]; then
    NOTES+=("$l ALLOWED a CONNECT to a port off its allow-list: its figures do not compare.")
  elif ! kill -0 "${PID[$l]}" 2>/dev/null; then
    NOTES+=("$l refused a CONNECT off its allow-list (status ${code:-none}) and then DIED: $(tail -n 2 "$WORK/$l.err" | tr '\n' ' ')")
  fi
done

# --- report --------------------------------------------------------------------------------------
squid_version=$(squid -v 2>/dev/null | awk 'NR==1 {print $4}')
tiny_version=$(tinyproxy -v 2>/dev/null | awk '{print $2}')
echo "## Egress proxy"
echo
quick_note=""
(( QUICK )) && quick_note=" --quick"
echo "\`bench/egress.sh$quick_note\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)),"
echo "load average at end $(cut -d' ' -f1-3 /proc/loadavg). One upstream on loopback (\`bench/egress_load.c serve\`,"
echo "one epoll thread, no keep-alive); every proxy allows CONNECT to that port only (Squid $squid_version and"
echo "tinyproxy $tiny_version with \`bench/egress/\` configs, caching and per-request logs off; mcpcell as"
echo "\`egress-proxy --allow-host bench.test --allow-port UP --resolve bench.test:UP:127.0.0.1\`). Client,"
echo "proxy and upstream share the machine's cores. Measurements interleaved across configs. The"
echo "reference relay (\`egress_load relay\`: one epoll thread, recv/send, no rules, DNS, audit or timers)"
echo "is not a proxy but the floor: what any proxy in the path costs on this machine."
dirty=$(git -C "$REPO_DIR" status --porcelain -- src 2>/dev/null | grep -q . && echo ", src/ with uncommitted changes" || true)
echo "mcpcell: \`$MCPCELL\` (built $(date -u -r "$MCPCELL" '+%H:%M UTC')); tree at run time: commit $(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)$dirty."
[[ -n $MCPCELL_NOTE ]] && { echo; echo "$MCPCELL_NOTE"; }
for note in "${NOTES[@]}"; do echo; echo "**Warning:** $note"; done
echo
awk -F'\t' -v lat_n="$LAT_N" -v bulk_mib="$((BULK_BYTES >> 20))" -v bulk_reps="$BULK_REPS" \
    -v conc="$RPS_CONC" -v tunnels="$IDLE_TUNNELS" -v order="${labels[*]}" '
  $1 == "RESULT" { v[$2, $3] = $4 }
  function r(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "—" : sprintf("%.2f", a / b) }
  function mb(kb) { return kb == "" ? "—" : sprintf("%.1f", kb / 1024) }
  function mem(l, when) { return v[l, "rss_" when "_kb"] == "" ? "—" : mb(v[l, "rss_" when "_kb"]) " (" mb(v[l, "anon_" when "_kb"]) ")" }
  function ms(us) { return us == "" ? "—" : sprintf("%.3f", us / 1000) }
  function val(x) { return x == "" ? "—" : x }
  END {
    n = split(order, L, " ")
    name["direct"] = "direct (no proxy)"; name["squid"] = "Squid"; name["tinyproxy"] = "tinyproxy"
    name["mcpcell"] = "mcpcell egress-proxy"; name["relay"] = "reference relay (floor, no rules)"
    name["base"] = "mcpcell base (MCPCELL_BASE)"
    printf "| config | tunnel + 1 KiB GET p50 ms | p99 ms | bulk MB/s | req/s, %d clients | proxy CPU µs/req | RSS idle MB (anon) | RSS %d tunnels MB (anon) |\n", conc, tunnels
    print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for (i = 1; i <= n; i++) {
      l = L[i]
      printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name[l], ms(v[l, "lat_p50_us"]), ms(v[l, "lat_p99_us"]),
        val(v[l, "bulk_mbs"]), val(v[l, "rps"]), val(v[l, "rps_cpu_us"]), mem(l, "idle"), mem(l, "tunnels")
    }
    print ""
    printf "%d sequential requests per config (each a new connection: connect, CONNECT, GET 1 KiB, timed to\n", lat_n
    printf "the last body byte); bulk: median of %d × %d MiB through one tunnel, timed from the GET; req/s: %d\n", bulk_reps, bulk_mib, conc
    print "clients each opening a new tunnel per request and reading to EOF; proxy CPU: user + system time the"
    print "proxy process spent per request during that run (/proc/PID/stat), which the machine'"'"'s other load"
    print "moves much less than req/s. RSS sums the proxy process and its children (VmRSS: shared library"
    print "and binary pages included; in brackets RssAnon, the private memory), idle after the readiness"
    print "probe and with the tunnels open (CONNECT answered, no data)."
    print ""
    print "| config | p50 × direct | p50 × Squid | bulk × direct | bulk × Squid | req/s × direct | req/s × Squid | CPU/req × Squid | RSS tunnels × Squid |"
    print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for (i = 1; i <= n; i++) {
      l = L[i]
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name[l],
        r(v[l, "lat_p50_us"], v["direct", "lat_p50_us"]), r(v[l, "lat_p50_us"], v["squid", "lat_p50_us"]),
        r(v[l, "bulk_mbs"], v["direct", "bulk_mbs"]), r(v[l, "bulk_mbs"], v["squid", "bulk_mbs"]),
        r(v[l, "rps"], v["direct", "rps"]), r(v[l, "rps"], v["squid", "rps"]), r(v[l, "rps_cpu_us"], v["squid", "rps_cpu_us"]),
        r(v[l, "rss_tunnels_kb"], v["squid", "rss_tunnels_kb"])
    }
    errs = ""
    for (i = 1; i <= n; i++) if (v[L[i], "rps_errors"] + 0 > 0) errs = errs " " name[L[i]] " " v[L[i], "rps_errors"]
    if (errs != "") { print ""; print "Failed requests during the req/s run:" errs "." }
    print ""
    print "Goals for mcpcell (issue 5): p50 ≤ 0.5× Squid, bulk ≥ 0.9× direct, req/s ≥ 2× Squid, RSS with 900 tunnels ≤ 8 MB."
    m = "mcpcell"
    if (v[m, "lat_p50_us"] == "") { print ""; print "(no mcpcell row in this run: goals not assessed)"; exit }
    print ""
    print "| goal | target | mcpcell | met | reference relay (floor) |"
    print "| --- | ---: | ---: | --- | ---: |"
    x = v[m, "lat_p50_us"] / v["squid", "lat_p50_us"]; f = r(v["relay", "lat_p50_us"], v["squid", "lat_p50_us"])
    printf "| p50 latency vs Squid | ≤ 0.50× | %.2f× | %s | %s× |\n", x, (x <= 0.5 ? "yes" : "**no**"), f
    x = v[m, "bulk_mbs"] / v["direct", "bulk_mbs"]; f = r(v["relay", "bulk_mbs"], v["direct", "bulk_mbs"])
    printf "| bulk vs direct | ≥ 0.90× | %.2f× | %s | %s× |\n", x, (x >= 0.9 ? "yes" : "**no**"), f
    x = v[m, "rps"] / v["squid", "rps"]; f = r(v["relay", "rps"], v["squid", "rps"])
    printf "| req/s vs Squid | ≥ 2.00× | %.2f× | %s | %s× |\n", x, (x >= 2 ? "yes" : "**no**"), f
    x = v[m, "rss_tunnels_kb"] / 1024; f = mb(v["relay", "rss_tunnels_kb"])
    label = sprintf("RSS, %d tunnels%s", tunnels, (tunnels == 900 ? "" : " (quick: not 900)"))
    if (v[m, "rss_tunnels_kb"] == "") printf "| %s | ≤ 8 MB | — | **no** | %s MB |\n", label, f
    else printf "| %s | ≤ 8 MB | %.1f MB | %s | %s MB |\n", label, x, (x <= 8 ? "yes" : "**no**"), f
    print ""
    print "Goals for mcpcell against the reference relay measured in this run (issue 15 item 3):"
    print ""
    print "| goal | target | mcpcell | relay | ratio | met |"
    print "| --- | ---: | ---: | ---: | ---: | --- |"
    x = v[m, "lat_p50_us"] / v["relay", "lat_p50_us"]
    printf "| p50 latency | ≤ 1.10× relay | %s ms | %s ms | %.2f× | %s |\n", ms(v[m, "lat_p50_us"]), ms(v["relay", "lat_p50_us"]), x, (x <= 1.1 ? "yes" : "**no**")
    x = v[m, "rps"] / v["relay", "rps"]
    printf "| req/s | ≥ 0.91× relay (1/1.1) | %s | %s | %.2f× | %s |\n", val(v[m, "rps"]), val(v["relay", "rps"]), x, (x >= 1 / 1.1 ? "yes" : "**no**")
    x = v[m, "rps_cpu_us"] / v["relay", "rps_cpu_us"]
    printf "| CPU per request | ≤ 1.10× relay | %s µs | %s µs | %.2f× | %s |\n", val(v[m, "rps_cpu_us"]), val(v["relay", "rps_cpu_us"]), x, (x <= 1.1 ? "yes" : "**no**")
    x = v[m, "bulk_mbs"] / v["relay", "bulk_mbs"]
    printf "| bulk | ≥ 0.95× relay | %s MB/s | %s MB/s | %.2f× | %s |\n", val(v[m, "bulk_mbs"]), val(v["relay", "bulk_mbs"]), x, (x >= 0.95 ? "yes" : "**no**")
    x = v[m, "rss_tunnels_kb"] / 1024
    printf "| RSS, %d tunnels | ≤ 8 MB | %.1f MB | %s MB | — | %s |\n", tunnels, x, mb(v["relay", "rss_tunnels_kb"]), (x <= 8 ? "yes" : "**no**")
    x = v[m, "anon_tunnels_kb"] / 1024
    printf "| private (RssAnon), %d tunnels | ≤ 1.5 MB | %.1f MB | %s MB | — | %s |\n", tunnels, x, mb(v["relay", "anon_tunnels_kb"]), (x <= 1.5 ? "yes" : "**no**")
    b = "base"
    if (v[b, "lat_p50_us"] == "") exit
    print ""
    print "The same ratios for the base build (MCPCELL_BASE) measured in this run, beside this build'"'"'s:"
    print ""
    print "| ratio to the relay | this build | base build |"
    print "| --- | ---: | ---: |"
    printf "| p50 latency | %s× | %s× |\n", r(v[m, "lat_p50_us"], v["relay", "lat_p50_us"]), r(v[b, "lat_p50_us"], v["relay", "lat_p50_us"])
    printf "| req/s | %s× | %s× |\n", r(v[m, "rps"], v["relay", "rps"]), r(v[b, "rps"], v["relay", "rps"])
    printf "| CPU per request | %s× | %s× |\n", r(v[m, "rps_cpu_us"], v["relay", "rps_cpu_us"]), r(v[b, "rps_cpu_us"], v["relay", "rps_cpu_us"])
    printf "| bulk | %s× | %s× |\n", r(v[m, "bulk_mbs"], v["relay", "bulk_mbs"]), r(v[b, "bulk_mbs"], v["relay", "bulk_mbs"])
    printf "| private memory, %d tunnels | %s MB | %s MB |\n", tunnels, mb(v[m, "anon_tunnels_kb"]), mb(v[b, "anon_tunnels_kb"])
  }' "$RES"
