// Adversary pass adv18: where npm's config copies live
// (src/source/npmrc_snapshot.cc: an owner-only directory
// ~/.cache/mcpcell/npx/.npmrc-PID-XXXXXX with `global` and `user`, the
// copies of the user's and the global npmrc, tokens and all).
//
// Findings:
//   1. MEDIUM the copies are readable by any cell of the same user that was
//      granted a read of ~/.cache or ~ (`--read ~`, a filesystem server's
//      usual grant). The credential scan masks ~/.npmrc itself (and any
//      path component named .npmrc, credentials.cc kLocations), but the
//      copies are named `user` and `global` in a directory `.npmrc-PID-X`:
//      nothing masks them, and the cell's uid is the user's (owner-only
//      0700/0600 keeps only other users out). They exist while any npx://
//      launch plans and installs (npm install and every install-script cell:
//      minutes), and after a launch killed mid-install until the next
//      install sweeps them. A server in such a cell polls the directory
//      and reads the user's registry tokens, which it was never shown. Same
//      for the install prefix's owner-only `.npmrc` (scope registries,
//      .install-PID-X/.npmrc) while npm runs — that one is named .npmrc and
//      masked, but only if it exists when the cell starts.
//      Reproduce: as a normal user, `mcpcell install npx://x@1.0.0` against
//      a registry that does not answer; meanwhile `mcpcell run --isolate
//      --read ~/.cache -- sh -c 'base64 ~/.cache/mcpcell/npx/.npmrc-*/user'`.
//      Suggested fix: keep the copies out of every tree a cell may be
//      granted: an owner-only directory under $XDG_RUNTIME_DIR or a private
//      tmpfs/mount namespace for the host npm, or memfds npm reads as
//      /proc/self/fd/N; at least mask mcpcell's cache work dirs (.npmrc-*,
//      .install-*) in every cell (credentials.cc), and refuse read grants
//      that cover ~/.cache/mcpcell/npx's work dirs.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const TEST_UID = 1001; // mcpcell-test
const TEST_GID = 1001;
const homes = [];
after(() => { for (const h of homes) rmSync(h, { recursive: true, force: true }); });

/** mcpcell as mcpcell-test (when we are root), collecting stdout/stderr. */
function mcpcellAsUser(args, env, guardMs) {
  const asRoot = process.getuid() === 0;
  const child = spawn(MCPCELL_BIN, args, {
    env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], ...(asRoot ? { uid: TEST_UID, gid: TEST_GID } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const done = new Promise((resolve) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), guardMs);
    child.on('close', (code) => { clearTimeout(guard); resolve({ code, stdout, stderr }); });
  });
  return { child, done };
}

test('adv18: a cell granted a read of ~/.cache reads the npmrc copies (the user\'s registry token) while another launch installs', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const home = mkdtempSync('/var/tmp/e2e-adv18-copies-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  // A registry that takes the connection and never answers: the install
  // waits in npm with its copies in place.
  const sockets = new Set();
  const hang = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); });
  await new Promise((r) => hang.listen(0, '127.0.0.1', r));
  t.after(() => { for (const s of sockets) s.destroy(); hang.close(); });
  const registry = `http://127.0.0.1:${hang.address().port}/`;
  const token = `npm_adv18${Math.random().toString(36).slice(2, 14)}`;
  const rc = path.join(home, '.npmrc');
  writeFileSync(rc, `registry=${registry}\n//127.0.0.1:${hang.address().port}/:_authToken=${token}\n`, { mode: 0o600 });
  chownSync(rc, TEST_UID, TEST_GID);
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', npm_config_update_notifier: 'false',
    npm_config_fetch_retries: '0', npm_config_fetch_timeout: '60000' };

  const installing = mcpcellAsUser(['install', '--install-scripts=skip', 'npx://adv18-copies@1.0.0'], env, 70_000);
  t.after(() => installing.child.kill('SIGKILL'));
  const npx = path.join(home, '.cache', 'mcpcell', 'npx');
  let copies = '';
  for (let i = 0; i < 100 && !copies; i++) {
    await sleep(100);
    try {
      copies = readdirSync(npx).find((n) => n.startsWith('.npmrc-') && existsSync(path.join(npx, n, 'cache'))) ?? '';
    } catch { /* not yet */ }
  }
  assert.ok(copies, 'the install made no npmrc snapshot directory (test setup)');

  // Another server, in a cell, granted a read of the cache (or of ~).
  const reader = mcpcellAsUser(['run', '--isolate', '--read', path.join(home, '.cache'), '--', '/bin/sh', '-c',
    `find ${npx} \\( -type f -o -type l \\) -exec cat {} + 2>/dev/null | base64 -w0`], env, 30_000);
  const r = await reader.done;
  installing.child.kill('SIGKILL');
  await installing.done;
  const seen = Buffer.from(r.stdout.trim(), 'base64').toString('utf8');
  t.diagnostic(`reader exit ${r.code}; read: ${JSON.stringify(seen.slice(0, 200))}\n${r.stderr.slice(-500)}`);
  assert.ok(!seen.includes(token), 'a cell read the user\'s registry token from the npmrc copy');
});
