# Shared steps of scripts/test.sh and scripts/setup-and-demo.sh. Sourced, not run.
# Expects: set -euo pipefail, cwd = the repository root.
# Every step logs to stderr, so a script's stdout carries only its own result.

BUILD_DIR=${BUILD_DIR:-build}
E2E_SRC=tests/e2e

log() { printf '\n== %s\n' "$*" >&2; }

require_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "$0: needs root (installs packages, creates a test user): sudo $0" >&2
    exit 2
  fi
}

# Installs only what is missing, with one `apt-get update` at most, so a second
# run on a ready machine touches nothing. Arguments: more packages to want.
install_packages() {
  local want=(build-essential cmake pkg-config libcli11-dev nlohmann-json3-dev libseccomp-dev libboost-dev
              libnftables-dev libldns-dev libsimdjson-dev libssl-dev libvectorscan-dev nettle-dev libtomlplusplus-dev libyaml-dev nftables dnsutils curl openssl
              libfmt-dev libgtest-dev libgmock-dev bubblewrap util-linux iproute2 uidmap
              strace python3 python3-venv python3-pip "$@")  # strace: the cell-uid test traces from outside; python3: the pty harness
  # python3-venv, python3-pip: uvx:// sources are installed into a venv by Debian's pip (src/source/uvx_install.h)
  command -v node >/dev/null 2>&1 || want+=(nodejs)
  command -v npm >/dev/null 2>&1 || want+=(npm)
  # node-gyp in the install-script cell builds against /usr/include/node (npm_config_nodedir=/usr):
  # NodeSource's nodejs ships those headers, Debian's own nodejs leaves them to libnode-dev.
  [ -e /usr/include/node/node_api.h ] || want+=(libnode-dev)
  local missing=() p
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "packages: all present"
    return
  fi
  log "packages: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # No package's own service starts (nginx, apache2 would take port 80 and
  # outlive the run): policy-rc.d answering 101 tells invoke-rc.d not to.
  local rc_d=/usr/sbin/policy-rc.d created=0 status=0
  if [ ! -e "$rc_d" ]; then printf '#!/bin/sh\nexit 101\n' >"$rc_d" && chmod 755 "$rc_d" && created=1; fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || status=$?
  [ "$created" = 0 ] || rm -f "$rc_d"
  return "$status"
}

build_mcpcell() {
  log "build: cmake in $BUILD_DIR/"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)" >&2
}

# The same sources with ASan+UBSan (gcc) in its own directory, for the
# sanitized unit and e2e steps (issue 9). ccache shares nothing with build/
# (other flags), so a cold machine compiles everything twice. -O1 -g1 (line
# tables: stack traces still name file:line) compiles in under half the CPU
# time of -O2 -g (measured on src/egress/http_forward.cc: 32 s against 72 s).
ASAN_BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
build_asan() {
  log "build: cmake in $ASAN_BUILD_DIR/ (-DMCPCELL_SANITIZE=ON)"
  cmake -S . -B "$ASAN_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DMCPCELL_SANITIZE=ON >/dev/null
  cmake --build "$ASAN_BUILD_DIR" -j "$(nproc)" >&2
}

# The pinned SDK and servers from package-lock.json; prefers the npm cache so a
# re-run works offline once the cache is warm.
# npx:// installs need npm's allow-git/allow-remote settings (npm 11 or
# later; src/source/npx_install.cc refuses an npm without them). Debian 12's
# npm is 9; a machine that upgrades npm at start may not have (seen: npm 10).
# Asking npm for the setting is the test: an npm that lacks it prints
# "undefined". The upgrade comes from the npm registry, like the test peers.
ensure_npm_refuses_url_sources() {
  local v
  v=$(npm config get allow-remote 2>/dev/null || true)
  case "$v" in all | none | root) return 0 ;; esac
  log "npm $(npm --version 2>/dev/null || echo missing) has no allow-remote setting; installing npm@11"
  npm install -g npm@11 --no-audit --no-fund --loglevel=error >&2
  hash -r
  v=$(npm config get allow-remote 2>/dev/null || true)
  case "$v" in all | none | root) return 0 ;; esac
  echo "npm $(npm --version) still has no allow-remote setting after npm install -g npm@11" >&2
  return 1
}

install_npm_servers() {
  ensure_npm_refuses_url_sources
  log "npm ci in $E2E_SRC"
  (cd "$E2E_SRC" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error >&2)
}

# Copies the binary (and the test programs) and the e2e tree (with node_modules) into a fresh
# world-readable directory and prints its path. Why a copy: a cell's uid is
# never the caller's (as root it maps to an unprivileged host uid), and the
# unprivileged test user must read the tree too, so every path component must be
# readable by anyone. The repository may live under /root (0700); chmod'ing the
# caller's home would silently weaken it, a copy in /tmp changes nothing of theirs.
# (The name must not start with "mcpcell": the e2e leak check watches /tmp/mcpcell*.)
stage_tree() {
  local stage
  stage=$(mktemp -d /tmp/e2e-stage.XXXXXX)
  chmod 0755 "$stage"
  cp "$BUILD_DIR/mcpcell" "$stage/mcpcell"
  # The test programs built from tests/attacks/*.cc sit next to the binary, where
  # the e2e fixtures look for them (ATTACK_BIN defaults to that directory).
  local src name
  for src in tests/attacks/*.cc; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .cc)
    [ ! -x "$BUILD_DIR/$name" ] || cp "$BUILD_DIR/$name" "$stage/$name"
  done
  cp -a "$E2E_SRC" "$stage/e2e"
  cp README.md "$stage/README.md" # walkthrough.test.mjs runs its "first hour" blocks
  chmod -R a+rX "$stage"
  echo "$stage"
}
