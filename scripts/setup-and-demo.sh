#!/usr/bin/env bash
# The README's first command: `sudo ./scripts/setup-and-demo.sh`.
# Installs what is missing, builds mcpcell, installs the pinned reference MCP
# servers, then runs server-everything in a native cell with a tiny SDK client
# that prints the server's tools (stdout) and what it is doing (stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

require_root
install_packages
build_mcpcell
install_npm_servers

# Run from a world-readable copy when the checkout is not readable by others
# (e.g. under /root): the cell's uid maps to an unprivileged host uid, which must
# be able to read node_modules. See stage_tree in scripts/common.sh.
if runuser -u nobody -- test -r "$E2E_SRC/node_modules/.package-lock.json" 2>/dev/null; then
  DEMO_DIR=$E2E_SRC
  BIN=$PWD/$BUILD_DIR/mcpcell
else
  STAGE=$(stage_tree)
  trap 'rm -rf "$STAGE"' EXIT
  DEMO_DIR=$STAGE/e2e
  BIN=$STAGE/mcpcell
fi

log "demo: server-everything in a cell, listed by the MCP SDK client"
cd "$DEMO_DIR"
MCPCELL_BIN=$BIN node demo.mjs
log "done. Full test suite: sudo ./scripts/test.sh"
