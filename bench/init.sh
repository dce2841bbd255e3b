#!/usr/bin/env bash
# Spawn → initialize reply of @modelcontextprotocol/server-everything, bare vs in a cell.
#   bench/init.sh [--quick]          (NODE_MODULES=dir holding @modelcontextprotocol/server-everything)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_mcpcell

RUNS=20
(( QUICK )) && RUNS=2
[[ -f $NODE_MODULES/@modelcontextprotocol/server-everything/dist/index.js ]] || {
  echo "bench: server-everything not installed under $NODE_MODULES (run: npm ci --prefix tests/e2e)" >&2
  exit 2
}
bench_log "init: $RUNS runs per config"
node "$BENCH_DIR/init_time.mjs" "$RUNS" "$MCPCELL" "$NODE_MODULES"
