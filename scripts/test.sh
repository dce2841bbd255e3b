#!/usr/bin/env bash
# The project's test command (README): `sudo ./scripts/test.sh`, or as root `./scripts/test.sh`.
#
# Idempotent. Installs missing packages, builds build/, runs the unit tests
# (ctest), installs the pinned npm servers, then runs the end-to-end suite twice:
# as root and as the unprivileged user mcpcell-test (mcpcell must work for both);
# then the same under ASan+UBSan (build-asan/: all unit tests, an e2e subset),
# the libFuzzer smoke runs (build-fuzz/, clang) and the container cells.
# Exits non-zero if any step failed; the last line is a one-line summary.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
source scripts/docker.sh

TEST_USER=mcpcell-test
START=$SECONDS
declare -a RESULTS=()
FAILED=0

# Runs one named step without stopping the script, recording PASS/FAIL.
step() {
  local name=$1
  shift
  log "$name"
  CURRENT=$name
  if "$@"; then
    RESULTS+=("$name=PASS")
  else
    RESULTS+=("$name=FAIL")
    FAILED=1
  fi
  CURRENT=
}

# $1: the script's exit status (an aborted setup step fails the run too).
summary() {
  local verdict=PASS
  [ "$1" = 0 ] && [ "$FAILED" = 0 ] || verdict=FAIL
  [ -z "${CURRENT:-}" ] || RESULTS+=("$CURRENT=INTERRUPTED")
  echo "test.sh: $verdict (${RESULTS[*]:-nothing ran}) in $((SECONDS - START))s"
}

# A normal user with a home (not --system: nothing special about it, like a
# developer's account; useradd also gives it /etc/subuid ranges).
ensure_test_user() {
  if ! id -u "$TEST_USER" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$TEST_USER"
  fi
}

unit_tests() {
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
}

# E2E_REQUIRE_ISOLATION=1: "isolation unavailable" (122) fails instead of
# skipping. Set where the kernel is known to allow it: always for root, and for
# the test user when it can create a user namespace itself.
# E2E_REQUIRE_LIMITS=1: an unenforceable --pids/--memory fails instead of
# skipping. Set for root when the pids and memory cgroup controllers exist;
# the unprivileged run leaves it to mcpcell/doctor and prints the skip reason.
cgroup_limits_available() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    grep -qw pids /sys/fs/cgroup/cgroup.controllers && grep -qw memory /sys/fs/cgroup/cgroup.controllers
  else
    [ -d /sys/fs/cgroup/pids ] && [ -d /sys/fs/cgroup/memory ]
  fi
}

# Every e2e file but compat.test.mjs, which has a step of its own (below).
e2e_files() { ls ./*.test.mjs | grep -vx './compat.test.mjs'; }

e2e_as_root() {
  local require_limits=0
  cgroup_limits_available && require_limits=1
  (cd "$STAGE/e2e" && env MCPCELL_BIN="$STAGE/mcpcell" E2E_REQUIRE_ISOLATION=1 \
    E2E_REQUIRE_LIMITS="$require_limits" node --test --test-concurrency=1 --test-reporter=spec $(e2e_files))
}

# The compatibility suite (docs/COMPAT.md): real npm servers, installed by
# mcpcell into root's cache (~/.cache/mcpcell/npx: the first run on a machine
# downloads them, later runs install nothing), each run in a cell with no network.
e2e_compat() {
  (cd "$STAGE/e2e" && env MCPCELL_BIN="$STAGE/mcpcell" E2E_REQUIRE_ISOLATION=1 \
    node --test --test-concurrency=1 --test-reporter=spec ./compat.test.mjs)
}

# Under ASan+UBSan (build-asan/): every unit test, then the e2e files that
# drive mcpcell's parsers (policy, profiles, registry, --dry-run), the native
# cell (clone, pivot_root, seccomp: attacks), the stdio path (stdout,
# server-everything) and the egress proxy (DNS stub, CONNECT, plain HTTP,
# SOCKS5, with curl in the cell). src/sanitizer_options.cc makes errors stop
# the program with a stack trace even where a test clears the environment.
SAN_OPTIONS=(ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
# attacks is back (issue 15): PID 1 no longer inherits the relay's compiled
# secret rules (built at the first message now, not before the clone), so the
# memcg OOM killer picks the battery's memory bomb, not the instrumented PID 1;
# the hostile server turns LeakSanitizer off (it cannot ptrace-stop itself
# under the cell's seccomp filter).
E2E_ASAN=(policy dry_run stdout everything egress attacks)

unit_tests_asan() {
  env "${SAN_OPTIONS[@]}" ctest --test-dir "$ASAN_BUILD_DIR" --output-on-failure -j "$(nproc)"
}

e2e_asan() {
  local stage=$1 files=() f
  for f in "${E2E_ASAN[@]}"; do files+=("./$f.test.mjs"); done
  (cd "$stage/e2e" && env "${SAN_OPTIONS[@]}" MCPCELL_BIN="$stage/mcpcell" E2E_REQUIRE_ISOLATION=1 E2E_REQUIRE_LIMITS=0 \
    node --test --test-concurrency=1 --test-reporter=spec "${files[@]}")
}

# libFuzzer targets (fuzz/, docs/FUZZING.md): a clang build, then each target
# for FUZZ_SECONDS on its seed corpus; any crash, leak or timeout fails.
FUZZ_SECONDS=${FUZZ_SECONDS:-12}
# Targets with a known, open finding, left out of the smoke run and named on
# every run (none now: secret_scan's rescan finding of 2026-11-24 is fixed,
# its inputs are in fuzz/corpus/secret_scan/crash-*).
FUZZ_KNOWN_FAILING=()
fuzz_smoke() {
  local targets=() t
  for t in $(cd fuzz && ls ./*_fuzz.cc | sed 's|^\./||; s|_fuzz\.cc$||'); do
    if [[ " ${FUZZ_KNOWN_FAILING[*]} " == *" $t "* ]]; then
      echo "fuzz: $t SKIPPED: known finding, open (see FUZZ_KNOWN_FAILING)"
    else
      targets+=("$t")
    fi
  done
  ./scripts/fuzz.sh build && ./scripts/fuzz.sh run "$FUZZ_SECONDS" "${targets[@]}"
}

e2e_as_test_user() {
  local require_isolation=0
  runuser -u "$TEST_USER" -- unshare --user --map-root-user true 2>/dev/null && require_isolation=1
  # env -i: the run must not inherit root's environment; HOME is the user's own.
  (cd "$STAGE/e2e" && runuser -u "$TEST_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
    HOME="$(getent passwd "$TEST_USER" | cut -d: -f6)" LANG=C.UTF-8 USER="$TEST_USER" \
    MCPCELL_BIN="$STAGE/mcpcell" E2E_REQUIRE_ISOLATION="$require_isolation" E2E_REQUIRE_LIMITS=0 \
    node --test --test-concurrency=1 --test-reporter=spec $(e2e_files))
}

require_root
# Interrupted (Ctrl-C, CI timeout): still print the summary, and fail.
trap 'exit 130' INT TERM
trap 'summary $?' EXIT
step layers scripts/check_layers.sh  # no upward include between src/ modules (docs/ARCHITECTURE.md)
# clang, libclang-rt-14-dev: the fuzz targets (libFuzzer and its ASan runtime);
# chromium: the browser servers of the compatibility suite (docs/COMPAT.md);
# universal-ctags: the function-length check;
# nginx-light, apache2, golang-go: real HTTP servers the tunnel gate's adversary tests
# (tests/unit/adv_http_host_gate_test.cc) try to reach another virtual host of
install_packages clang libclang-rt-14-dev chromium universal-ctags nginx-light apache2 golang-go
step function-length scripts/check_function_length.sh  # every function in src/ under 80 lines (docs/ARCHITECTURE.md)
ensure_test_user
build_mcpcell
step unit unit_tests
install_npm_servers

STAGE=$(stage_tree)
trap 'rc=$?; rm -rf "$STAGE"; summary $rc' EXIT
step e2e-root e2e_as_root
step "e2e-$TEST_USER" e2e_as_test_user
step e2e-compat e2e_compat

step build-asan build_asan
step unit-asan unit_tests_asan
if [ -x "$ASAN_BUILD_DIR/mcpcell" ]; then
  # The sanitized mcpcell with the normal test programs: those run inside the
  # cell as the server would, and are fixtures, not what is under test.
  ASAN_STAGE=$(stage_tree)
  cp "$ASAN_BUILD_DIR/mcpcell" "$ASAN_STAGE/mcpcell"
  trap 'rc=$?; rm -rf "$STAGE" "$ASAN_STAGE"; summary $rc' EXIT
  step e2e-asan e2e_asan "$ASAN_STAGE"
fi
step fuzz-smoke fuzz_smoke

# Container cells (docker, gVisor): starts dockerd if needed (scripts/docker.sh).
step e2e-docker e2e_docker "$STAGE"
step "e2e-docker-$DOCKER_TEST_USER" e2e_docker_as_user "$STAGE"

exit "$FAILED"
