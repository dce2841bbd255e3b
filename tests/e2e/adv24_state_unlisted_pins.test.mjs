// Adversary pass adv24 on 255224a: a launch that cannot list its state
// directory still keeps its tool pins there. FAILED on main at 5f04c5e;
// fixed in session 15 (cli/pins_plan.cc lists the pins' state directory
// or refuses the launch).
//
// MEDIUM: RememberStateDir fails for an account whose passwd home is missing
// or cannot be written (nobody's /nonexistent, a systemd DynamicUser, a
// container's uid without a passwd entry, a read-only home) and for every
// account once its list passes 64 KiB. TrackedRun::Start
// (src/cli/tracked_run.cc:39-47) then warns "this run is not listed by
// 'mcpcell ps' and has no log" and the launch goes on; but the relay's pin
// store does not go through OpenStateDir at all: DefaultPinsDir
// (src/guard/pin_store.cc:71-77) makes $XDG_STATE_HOME/mcpcell/pins with
// PinStore::Open's MakeDirs (pin_store.cc:94-99) and writes the pins there,
// in a state directory no list names. A later launch of the same account
// in another environment (no XDG_STATE_HOME) hides nothing there: its cell
// granted --write on the directory reads and rewrites the pins, i.e. it can
// approve its own poisoned tool description ahead of the next run (the
// relay trusts the pin file). THREAT_MODEL says such a launch "writes no
// record and no log there"; it still writes the pins.
// Fix: open the pin directory through OpenStateDir("pins") (so it is listed
// first, or refused), and when the state directory cannot be listed refuse
// --relay pins under a non-default XDG_STATE_HOME (fail closed) instead of
// writing them unlisted; likewise `mcpcell pins approve`.
//
// Bounded: two short launches as nobody (uid 65534, home /nonexistent) in a
// temporary home that is removed after.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, NODE_BIN } from './lib/paths.mjs';

const NOBODY = { uid: 65534, gid: 65534 };
const homes = [];
after(() => { for (const h of homes) spawnSync('rm', ['-rf', '--', h]); });

const MESSAGES = [
  { jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'adv24', version: '1' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
].map((m) => JSON.stringify(m)).join('\n') + '\n';

/** One relayed session as nobody: initialize, tools/list (which pins), then stdin ends. */
function pinOnce(env) {
  return new Promise((resolve) => {
    const child = spawn(MCPCELL_BIN, ['run', '--isolate', '--relay=on', '--read', E2E_DIR, '--', NODE_BIN,
      path.join(E2E_DIR, 'servers', 'pins_server.mjs')], { ...NOBODY, env, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const guard = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (out.includes('"id":2')) child.stdin.end();
    });
    child.stderr.setEncoding('utf8').on('data', (d) => { err += d; });
    child.on('close', (code) => { clearTimeout(guard); resolve({ code, out, err }); });
    child.stdin.write(MESSAGES);
  });
}

test('adv24: a launch that cannot list its state directory keeps its pins there, unlisted: a later cell rewrites them', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (process.getuid() !== 0 || spawnSync('id', ['-u', 'nobody']).stdout.toString().trim() !== '65534') {
    t.skip('needs root and nobody (65534)');
    return;
  }
  const home = mkdtempSync('/var/tmp/e2e-adv24-nohome-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, NOBODY.uid, NOBODY.gid);
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
  const first = await pinOnce({ ...env, XDG_STATE_HOME: `${home}/xdg` });
  const pins = `${home}/xdg/mcpcell/pins`;
  if (!first.out.includes('"name":"add"')) {
    // Fixed (session 15): pinning where the state directory cannot be
    // listed is refused, naming why and the way out; nothing is pinned.
    assert.match(first.err, /tool pins are kept only in a state directory every launch hides/, first.err.slice(-800));
    assert.ok(!existsSync(pins), `the refused launch still made ${pins}`);
    return;
  }
  t.diagnostic(`pins: ${readdirSync(pins).join(' ')}`);
  const r = spawnSync(MCPCELL_BIN, ['run', '--isolate', '--relay=off', '--write', `${home}/xdg`, '--', '/bin/sh', '-c',
    'for f in "$1"/*.json; do grep -q pins_server "$f" && echo "[read]"; done; echo forged > "$1"/adv24-forged && echo "[wrote]"; echo "[end]"',
    'sh', pins], { ...NOBODY, env, cwd: '/', encoding: 'utf8', input: '', timeout: 60_000 });
  assert.match(r.stdout ?? '', /\[end\]/, (r.stderr ?? '').slice(-800));
  assert.doesNotMatch(r.stdout, /\[read\]|\[wrote\]/,
    `a cell granted --write ${home}/xdg read or rewrote the pins a launch under XDG_STATE_HOME=${home}/xdg kept there unlisted`);
});
