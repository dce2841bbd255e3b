// Driving npm install scripts run in place (an install made with
// --install-scripts=skip, its scripts run by a later launch in the
// published install): the install without scripts, launches in the
// background, and what the package's script left in its directory.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

import { runMcpcell } from './mcpcell.mjs';
import { MCPCELL_BIN } from './paths.mjs';

/** `mcpcell install --install-scripts=skip SOURCE`; throws unless it succeeds. */
export async function installWithoutScripts(source, env) {
  const r = await runMcpcell(['install', '--install-scripts=skip', source], { env, guardMs: 90_000 });
  if (r.code !== 0) throw new Error(`install without scripts (test setup) exited ${r.code}: ${r.stderr.slice(-600)}`);
}

/**
 * `mcpcell install SOURCE` in the background: { child, stderr(), done }
 * (done resolves to { code, signal, stderr }). `onStderr(text, child)` is
 * called with all of stderr so far on every chunk.
 */
export function startInstall(source, env, guardMs, onStderr = () => {}) {
  const child = spawn(MCPCELL_BIN, ['install', source], { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    stderr += d;
    onStderr(stderr, child);
  });
  child.stdout.resume();
  const done = new Promise((resolve) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), guardMs);
    child.on('close', (code, signal) => { clearTimeout(guard); resolve({ code, signal, stderr }); });
  });
  return { child, stderr: () => stderr, done };
}

/** The `blob-*` files the test package's script wrote into `pkgDir` (none when it is gone). */
export function blobsIn(pkgDir) {
  return existsSync(pkgDir) ? readdirSync(pkgDir).filter((n) => n.startsWith('blob-')) : [];
}

/** Polls `cond` every 100 ms, at most `tries` times; whether it held. */
export async function until(cond, tries = 600) {
  for (let i = 0; i < tries; i++) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
