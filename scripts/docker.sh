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
  # podman (+ runc, which podman here needs: crun fails on hybrid cgroups) for the podman cells.
  # catatonit: the init Podman runs as PID 1 of each container (mcpcell asks
  # for one, src/cell/docker/podman_init.h); only a Recommends of podman, so
  # --no-install-recommends leaves it out and every podman cell is refused.
  # podman's other Recommends are not needed here: slirp4netns, fuse-overlayfs,
  # uidmap and dbus-user-session serve rootless podman (the tests use the root
  # service), buildah builds images; conmon and the CNI plugins
  # (containernetworking-plugins) are Depends already.
  local want=(docker.io curl podman runc catatonit) missing=() p
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

# Podman's Docker-compatible API service, for the podman cells. Podman 4.3 on
# this kind of host needs runc (crun fails on hybrid cgroups v1+v2); the
# service is started with it as the default runtime. Like dockerd, it outlives
# this script (setsid) and answers on a root socket; its pid is kept so
# stop_podman ends exactly that process.
PODMAN_SOCK=${PODMAN_SOCK:-/run/podman/podman.sock}
PODMAN_STATE=${PODMAN_STATE:-/run/mcpcell-podman}

podman_ping() {
  curl -fsS --max-time 2 --unix-socket "$PODMAN_SOCK" http://localhost/_ping >/dev/null 2>&1
}

ensure_podman() {
  if podman_ping; then
    log "podman: service already answering on $PODMAN_SOCK"
    return 0
  fi
  # Installs only what is missing (dockerd may already have been running).
  install_docker_packages || { echo "podman: cannot install podman/runc" >&2; return 1; }
  command -v podman >/dev/null 2>&1 || { echo "podman: not installed (apt-get install podman)" >&2; return 1; }
  command -v runc >/dev/null 2>&1 || { echo "podman: runc is missing (apt-get install runc)" >&2; return 1; }
  mkdir -p "$PODMAN_STATE" "$(dirname "$PODMAN_SOCK")"
  log "podman: starting its API service with runc (log: $PODMAN_STATE/service.log)"
  # From /: the service outlives this run, and conmon inherits its working
  # directory; started inside a clone that is later removed, every container
  # after that fails ("conmon: Failed to get working directory", attach 409).
  (cd / && exec setsid podman --runtime "$(command -v runc)" system service --time=0 "unix://$PODMAN_SOCK" \
    >"$PODMAN_STATE/service.log" 2>&1 </dev/null) &
  echo $! >"$PODMAN_STATE/service.pid"
  local i
  for i in $(seq 1 40); do
    podman_ping && { log "podman: service up after ${i}x0.5s"; return 0; }
    sleep 0.5
  done
  echo "podman: no answer on $PODMAN_SOCK within 20s; last log lines:" >&2
  tail -n 20 "$PODMAN_STATE/service.log" >&2 || true
  return 1
}

# Stops the service ensure_podman started (only that pid, never another podman).
stop_podman() {
  local pid
  pid=$(cat "$PODMAN_STATE/service.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
  rm -f "$PODMAN_STATE/service.pid"
}

# scripts/test.sh's e2e-docker step: the container-cell e2e tests of the staged
# tree $1 against a real engine. Fails (never skips) when no engine can be had.
e2e_docker() {
  local stage=$1
  ensure_docker || return 1
  # The root pass checks the docker-group user's runs from outside (docker.test.mjs).
  ensure_docker_test_user || { echo "docker: cannot create $DOCKER_TEST_USER in group docker" >&2; return 1; }
  # Podman cells too (installed with docker.io above); podman.test.mjs fails
  # (never skips) under MCPCELL_E2E_BACKEND=docker if its service is not up.
  ensure_podman || return 1
  (cd "$stage/e2e" && env MCPCELL_BIN="$stage/mcpcell" MCPCELL_E2E_BACKEND=docker \
    MCPCELL_DOCKER_TEST_USER="$DOCKER_TEST_USER" node --test --test-concurrency=1 --test-reporter=spec ./docker*.test.mjs ./podman.test.mjs \
    ./adv23_*.test.mjs)
}

# The same container tests as a normal user in the docker group (issue 18.3:
# every docker run of such a user failed, and only root ran these tests). A
# user of its own, not $TEST_USER: membership of the docker group is
# root-equivalent, and the plain e2e run must stay that of an unprivileged user.
# What needs root today skips with its reason: container allow-lists (setns
# into the container), podman (root's service), the tests that switch users.
DOCKER_TEST_USER=${DOCKER_TEST_USER:-mcpcell-docker}

ensure_docker_test_user() {
  id -u "$DOCKER_TEST_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$DOCKER_TEST_USER"
  # The docker group comes with docker.io; a user added now is in it for every new login (runuser).
  usermod -aG docker "$DOCKER_TEST_USER"
}

e2e_docker_as_user() {
  local stage=$1
  ensure_docker || return 1
  ensure_docker_test_user || { echo "docker: cannot create $DOCKER_TEST_USER in group docker" >&2; return 1; }
  (cd "$stage/e2e" && runuser -u "$DOCKER_TEST_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
    HOME="$(getent passwd "$DOCKER_TEST_USER" | cut -d: -f6)" LANG=C.UTF-8 USER="$DOCKER_TEST_USER" \
    MCPCELL_BIN="$stage/mcpcell" MCPCELL_E2E_BACKEND=docker \
    node --test --test-concurrency=1 --test-reporter=spec ./docker*.test.mjs ./podman.test.mjs)
}

# Run directly: start the engine and report.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  source scripts/common.sh
  require_root
  ensure_docker
  if command -v podman >/dev/null 2>&1; then ensure_podman; fi
fi
