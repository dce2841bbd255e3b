// Adversary pass adv20: source/npx_install.cc RemoveAbandonedInstalls after
// the adv19 fixes (c6cafe4: "a live owner's (kill(pid, 0) == 0 or EPERM) or
// flock-held .install-*/.npmrc-* directory is never swept").
//
// Findings:
//   1. LOW-MEDIUM A killed launch's work directories are never swept when
//      their pid names a process the sweeper cannot tell from their owner,
//      however old: the sweeper itself, or any process of another user
//      (EPERM). The common case is a launch that ran as a small, repeated
//      pid in a pid namespace: mcpcell as a container's PID 1 (`docker run
//      img mcpcell run npx://...`, the usual way to ship a server; `docker
//      stop` SIGKILLs it after 10 s since PID 1 has no default SIGTERM
//      action, and a cache volume keeps ~/.cache/mcpcell), or the first
//      process of a sandbox (bwrap --unshare-pid, unshare -pf). Its
//      `.npmrc-1-XXXXXX` (npm's --cache for the launch: _cacache index keys
//      and packuments hold the registry URLs with their path tokens, what
//      adv16/adv19 sweep for) and `.install-1-XXXXXX` stay for good:
//        - the next container's mcpcell is PID 1 again: kill(1, 0) == 0 is
//          itself, so "alive";
//        - the host's mcpcell (a normal user) gets EPERM for init: "alive".
//      `stale` (an hour old) no longer counts for an "alive" owner, and no
//      one holds the flock. The same holds for any reused pid (a long-lived
//      process of another user, or of ours), without bound.
//      Reproduce: mkdir -p ~/.cache/mcpcell/npx/.npmrc-1-x/cache; touch -d
//      '3 hours ago' it; `mcpcell gc` (host), and `unshare -pf setpriv
//      --reuid=<user> ... mcpcell gc` (PID 1): both "1 checked, 0 removed".
//      Suggested fix: the flock is the liveness proof now (every .install-
//      and .npmrc- directory is held from right after mkdtemp for its
//      owner's life): sweep every directory that is not held and is either
//      of a dead owner, of our own pid (we hold ours: one not held is a
//      previous process's), or older than a few minutes (the
//      mkdtemp->flock window); or write the owner's start time
//      (/proc/<pid>/stat field 22) in the name and compare.
// Held (tried, kept as a passing test below): a dead owner's unheld
// directory is swept; a held one (flock) is not, even if its pid is dead
// here (another pid namespace).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { MCPCELL_BIN } from './lib/paths.mjs';

const TEST_UID = 1001; // mcpcell-test
const TEST_GID = 1001;
const homes = [];
after(() => { for (const h of homes) spawnSync('rm', ['-rf', '--', h]); });

function userHome() {
  const home = mkdtempSync('/var/tmp/e2e-adv20-sw-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.state'), LANG: 'C.UTF-8' };
  return { home, env, npx: path.join(home, '.cache', 'mcpcell', 'npx') };
}

const asUser = { uid: TEST_UID, gid: TEST_GID };
const SETPRIV = ['setpriv', `--reuid=${TEST_UID}`, `--regid=${TEST_GID}`, '--clear-groups'];

// npm's cache of a killed launch: the index key holds the registry URL with its path token.
function leaveSnapshot(dir) {
  const idx = path.join(dir, 'cache', '_cacache', 'index-v5', 'aa');
  const made = spawnSync('sh', ['-c', `mkdir -p '${idx}' && ` +
    `echo 'make-fetch-happen:request-cache:https://registry.example/SECRETPATHTOKEN/pkg/-/pkg-1.0.0.tgz' > '${idx}/bb' && ` +
    `touch -d '3 hours ago' '${dir}'`], asUser);
  assert.equal(made.status, 0, 'test setup');
}

function gcLine(r) {
  return (r.stdout + r.stderr).split('\n').filter((l) => l.includes('npx')).join('\n');
}

test('adv20: a killed container PID 1 launch\'s npm snapshot (.npmrc-1-*) is swept by the next launch or the host', {
  timeout: 60_000,
}, (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to act as mcpcell-test'); return; }
  const { env, npx } = userHome();
  const snap = path.join(npx, '.npmrc-1-adv20k');
  leaveSnapshot(snap);
  // The next container: mcpcell is PID 1 of a fresh pid namespace again.
  const inner = spawnSync('unshare', ['-pf', '--kill-child', ...SETPRIV, MCPCELL_BIN, 'gc'],
    { env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(inner.error, undefined, 'mcpcell gc (PID 1) ended');
  t.diagnostic(`as PID 1: ${gcLine(inner)}`);
  // The host: PID 1 is init, another user's (EPERM).
  const host = spawnSync(MCPCELL_BIN, ['gc'], { ...asUser, env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(host.error, undefined, 'mcpcell gc (host) ended');
  t.diagnostic(`on the host: ${gcLine(host)}`);
  assert.ok(!existsSync(snap), 'a 3-hour-old, unheld npm snapshot of a killed launch (pid 1) survived both sweeps');
});

test('adv20: a dead owner\'s unheld snapshot is swept; a held one is not (held)', {
  timeout: 60_000,
}, (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to act as mcpcell-test'); return; }
  const { env, npx } = userHome();
  const deadPid = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
  const dead = path.join(npx, `.npmrc-${deadPid}-adv20d`);
  const held = path.join(npx, `.npmrc-${deadPid}-adv20h`);
  leaveSnapshot(dead);
  leaveSnapshot(held);
  // A live launch in another pid namespace: its pid means nothing here, its flock does.
  const holder = spawnSync('sh', ['-c',
    `flock '${held}' env HOME='${env.HOME}' XDG_CACHE_HOME='${env.XDG_CACHE_HOME}' XDG_STATE_HOME='${env.XDG_STATE_HOME}' PATH='${env.PATH}' '${MCPCELL_BIN}' gc`],
  { ...asUser, encoding: 'utf8', timeout: 30_000 });
  assert.equal(holder.error, undefined, 'mcpcell gc ended');
  t.diagnostic(gcLine(holder));
  assert.ok(!existsSync(dead), 'a dead owner\'s unheld snapshot was swept');
  assert.ok(existsSync(held), 'a held snapshot was left');
});
