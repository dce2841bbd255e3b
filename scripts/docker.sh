# Docker engine for the container-cell tests. Sourced by scripts/test.sh (after
# common.sh), or run directly: `sudo ./scripts/docker.sh` starts an engine and exits.
#
# ensure_docker: installs docker.io (and runsc) when missing, starts dockerd in
# the background unless an engine already answers on /var/run/docker.sock, and
# waits for /_ping. Nothing is pulled: mcpcell imports its own empty base image
# (src/cell/docker/base_image.cc) and binds the host's /usr, /lib*, /bin
# read-only, so the engine needs no registry. It returns non-zero (and says
# why) when the engine cannot be had: the docker tests then FAIL, never skip.

DOCKER_SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
DOCKER_STATE=${DOCKER_STATE:-/run/mcpcell-dockerd}

docker_ping() {
  curl -fsS --max-time 2 --unix-socket "$DOCKER_SOCK" http://localhost/_ping >/dev/null 2>&1
}

install_docker_packages() {
  local want=(docker.io curl) missing=() p
  # runsc (gVisor) is optional: the gVisor cell is refused, loudly, without it.
  apt-cache show runsc >/dev/null 2>&1 && want+=(runsc)
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "docker: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# A config of our own (not /etc/docker/daemon.json: that file is the admin's).
# runsc needs --network=none on this kind of host (see /work/shared/FACTS.md);
# mcpcell's gVisor cells have no network anyway. --oci-seccomp: without it
# runsc ignores the container's seccomp profile (mcpcell's deny list), and
# ptrace, unshare and io_uring stay allowed inside the sandbox.
write_daemon_config() {
  mkdir -p "$DOCKER_STATE"
  local runtimes='{}'
  if command -v runsc >/dev/null 2>&1; then
    runtimes="{\"runsc\": {\"path\": \"$(command -v runsc)\", \"runtimeArgs\": [\"--network=none\", \"--oci-seccomp\"]}}"
  fi
  cat >"$DOCKER_STATE/daemon.json" <<EOF
{
  "runtimes": $runtimes,
  "log-driver": "none"
}
EOF
}

ensure_docker() {
  if docker_ping; then
    log "docker: engine already answering on $DOCKER_SOCK"
    return 0
  fi
  install_docker_packages || { echo "docker: cannot install docker.io" >&2; return 1; }
  write_daemon_config
  log "docker: starting dockerd (log: $DOCKER_STATE/dockerd.log)"
  # setsid: dockerd outlives this script and is not in its process group, so a
  # test run's Ctrl-C does not take the engine down with it.
  setsid dockerd --config-file "$DOCKER_STATE/daemon.json" -H "unix://$DOCKER_SOCK" \
    --pidfile "$DOCKER_STATE/dockerd.pid" >"$DOCKER_STATE/dockerd.log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 60); do
    docker_ping && { log "docker: engine up after ${i}x0.5s"; return 0; }
    sleep 0.5
  done
  echo "docker: dockerd did not answer /_ping on $DOCKER_SOCK within 30s; last log lines:" >&2
  tail -n 20 "$DOCKER_STATE/dockerd.log" >&2 || true
  return 1
}

# scripts/test.sh's e2e-docker step: the container-cell e2e tests of the staged
# tree $1 against a real engine. Fails (never skips) when no engine can be had.
e2e_docker() {
  local stage=$1
  ensure_docker || return 1
  (cd "$stage/e2e" && env MCPCELL_BIN="$stage/mcpcell" MCPCELL_E2E_BACKEND=docker \
    node --test --test-concurrency=1 --test-reporter=spec ./docker*.test.mjs)
}

# Run directly: start the engine and report.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  source scripts/common.sh
  require_root
  ensure_docker
fi
