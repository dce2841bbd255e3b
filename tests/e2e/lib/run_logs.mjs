// A run's state directory of its own (XDG_STATE_HOME), and the stderr logs
// mcpcell keeps there (<state>/mcpcell/logs/<id>.log, cell/stderr_log.h).

import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { makeTempDir } from './tmp.mjs';

/** A fresh 0700 state directory and an environment that points mcpcell at it. */
export function stateEnv(prefix = 'stderr-secrets-state') {
  const state = makeTempDir(prefix);
  chmodSync(state, 0o700);
  return { state, env: { ...process.env, XDG_STATE_HOME: state } };
}

/** Every run log under `state`, joined. */
export function logsOf(state) {
  const dir = path.join(state, 'mcpcell', 'logs');
  return readdirSync(dir).filter((f) => f.endsWith('.log')).map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
}
