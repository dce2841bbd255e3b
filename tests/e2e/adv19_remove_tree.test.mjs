// Adversary pass adv19: util/remove_tree.cc RemoveTree (handle-based, chmod
// 0700 on the way, iterative: down by openat(name), up by openat("..") with
// the names on the way kept in `down`).
//
// Findings:
//   1. HIGH RemoveTree climbs out of the tree it was given when a directory
//      is moved while it walks, and empties every directory it climbs into.
//      It counts its depth in `down`, not in where ".." leads: when the
//      directory it is emptying is renamed k levels higher (within the
//      tree), the ".." walk reaches the tree's top k levels early, and the
//      remaining k pops each openat(".."), past the top, and EmptyOnce the
//      directory reached — the tree's parent, its grandparent, ...: with
//      k = 1 the whole npx cache (every installed package), with k = 4
//      ~/.cache/mcpcell/npx/.install-X → the user's home, with k = 5 as root
//      (/root/.cache/mcpcell/npx/.install-X) the host's `/`.
//      Who moves it: RemoveAbandonedInstalls (every install's start, and
//      `mcpcell gc`) removes an `.install-PID-X` whose owner is ALIVE once
//      its top directory's mtime is over an hour old. The top changes when
//      each package's script cell starts (its .mcpcell-bin.X view is made
//      there), so one package's scripts must run over an hour: a user who
//      set --install-timeout above 1h (mcpcell's own advice after a timeout
//      is to double it; a large native build on a slow machine). Or no wait
//      at all: an mcpcell in another pid namespace sharing the cache (a
//      container or sandboxed client with the same HOME) sees kill(pid, 0)
//      fail with ESRCH and sweeps a live install as dead. The install is
//      removed while its current script cell still runs, and that cell may
//      rename directories
//      in its own package directory (it sees its files vanish: the moment
//      to move the one being emptied). The test stands a same-uid host
//      process in for the cell (it can only rename inside the tree, as the
//      cell can) and keeps the climb to 1 level: `mcpcell gc` then removes a
//      published sibling install (canary) outside the tree it was asked to
//      remove.
//      Each ancestor it climbs into is also fchmod'ed 0700 first (EmptyOnce):
//      as root, /var/tmp or / would lose its mode.
//      A second escape under the same race (not tested): OpenDirAt's
//      fchmodat(parent, name, 0700, 0) follows a symlink (flags 0): a 0300
//      directory (EACCES, a normal user's run) swapped for a link between the
//      failed openat and the fchmodat makes mcpcell chmod 0700 whatever the
//      link names (AT_SYMLINK_NOFOLLOW, or fchmod on an O_PATH fd, avoids it).
//      Reproduce: .install-<live pid>-X (mtime 2 h old) with
//      node_modules/pkg/a/D holding 40,000 files; `mcpcell gc`; when a file
//      of D is gone, `mv .../pkg/a/D .../pkg/D2`: npx/canary@1.0.0 is gone.
//      Suggested fix: never go up by ".."; keep the fd of every directory
//      on the way (a stack of fds, or re-open each level from the top by
//      name with O_NOFOLLOW and compare dev/ino), and before emptying a
//      directory check it is still the one the name led to (fstat dev/ino
//      == the entry's). Stop (fail) on any mismatch. Also stay on the top's
//      filesystem (st_dev), as `rm --one-file-system`.
//   2. MEDIUM the sweep removes a live install: `stale` (mtime over an hour)
//      alone suffices even when kill(owner, 0) says the owner is alive. An
//      install with a step over an hour (allowed: --install-timeout is the
//      user's) is removed under its running cells by any other
//      launch's install or `mcpcell gc`, and finding 1 runs against a live
//      writer. Suggested fix: remove a live owner's directory never (a pid
//      reuse is answered by the pid's start time, as cell records do), or
//      take an flock on the directory for the install's life and sweep only
//      what can be locked.
// Held (read, not kept as tests): symlinks are unlinked, never followed
// (fstatat AT_SYMLINK_NOFOLLOW, O_NOFOLLOW opens); a 0000/0300 directory is
// chmod 0700 first and removed; a directory that cannot be emptied is
// `stuck` and never entered again, so the walk ends.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { MCPCELL_BIN } from './lib/paths.mjs';

const TEST_UID = 1001; // mcpcell-test
const TEST_GID = 1001;
const homes = [];
after(() => { for (const h of homes) spawnSync('rm', ['-rf', '--', h]); });

// The racer: builds the tree (named for a dead owner, argv[3], so the sweep
// takes it), says "ready", waits for the sweep to start (one of D's files
// gone, or D gone from its place), then for two seconds moves every
// directory it finds in the tree into another one, deeper or higher: what a
// cell renaming inside its package can do while RemoveTree runs. (adv19's
// first racer moved D one level up once; RemoveTree then climbed by ".."
// past the top. It no longer climbs: it flattens, moving what it finds up
// to the top, so D is gone from its place before its files are.)
const RACER = `
import os, sys, time
npx, files, dead = sys.argv[1], int(sys.argv[2]), sys.argv[3]
top = os.path.join(npx, '.install-%s-adv19x' % dead)
pkg = os.path.join(top, 'node_modules', 'pkg')
d = os.path.join(pkg, 'a', 'D')
os.makedirs(d)
for i in range(files):
    open(os.path.join(d, 'f%d' % i), 'w').close()
old = time.time() - 7200
for p in (d, os.path.dirname(d), pkg, os.path.dirname(pkg), top):
    os.utime(p, (old, old))
print('ready', flush=True)
probe = [os.path.join(d, 'f%d' % i) for i in range(0, files, files // 400)]
deadline = time.time() + 60
seen = False
while time.time() < deadline and not seen:
    seen = not os.path.lexists(d) or any(not os.path.lexists(p) for p in probe)
moves = 0
end = time.time() + 2
while seen and time.time() < end:
    dirs = []
    for root, subdirs, _ in os.walk(top):
        dirs += [os.path.join(root, x) for x in subdirs]
        if len(dirs) > 50: break
    for i, x in enumerate(dirs):
        into = dirs[(i + 1) % len(dirs)]
        for target in (os.path.join(into, 'm%d' % moves), os.path.join(top, 'u%d' % moves)):
            try:
                os.rename(x, target)
                moves += 1
                break
            except OSError:
                pass
print('moved %d' % moves if seen else 'never-saw-the-sweep', flush=True)
time.sleep(1)
`;

test('adv19: a directory moved during RemoveTree\'s walk makes `mcpcell gc` empty the tree\'s parent (a sibling install is removed)', {
  timeout: 120_000,
}, async (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = mkdtempSync('/var/tmp/e2e-adv19-rt-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const npx = path.join(home, '.cache', 'mcpcell', 'npx');
  const asUser = { uid: TEST_UID, gid: TEST_GID };
  spawnSync('mkdir', ['-p', path.join(npx, 'canary@1.0.0')], asUser);
  spawnSync('sh', ['-c', `echo keep > '${path.join(npx, 'canary@1.0.0', 'keep.txt')}'`], asUser);
  assert.ok(existsSync(path.join(npx, 'canary@1.0.0', 'keep.txt')), 'test setup');

  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.state'), LANG: 'C.UTF-8' };
  // A dead owner: the sweep removes only a dead (or an hour-old, unheld) owner's install.
  const npxMode = statSync(npx).mode & 0o777;
  const gone = spawnSync('sh', ['-c', 'echo $$']);
  const deadPid = gone.stdout.toString().trim();
  const racer = spawn('/usr/bin/python3', ['-c', RACER, npx, '40000', deadPid], { ...asUser, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let said = '';
  racer.stdout.setEncoding('utf8').on('data', (d) => (said += d));
  t.after(() => racer.kill('SIGKILL'));
  for (let i = 0; i < 600 && !said.includes('ready'); i++) await new Promise((r) => setTimeout(r, 100));
  assert.match(said, /ready/, 'the racer built its tree (test setup)');

  const gc = spawnSync(MCPCELL_BIN, ['gc'], { ...asUser, env, encoding: 'utf8', timeout: 60_000 });
  await new Promise((r) => racer.on('close', r));
  t.diagnostic(`racer: ${said.trim()}; gc exit ${gc.status}\n${(gc.stdout + gc.stderr).slice(-600)}`);
  assert.match(said, /moved [1-9]/, 'the racer never saw the sweep or moved nothing (test setup)');
  assert.equal(gc.error, undefined, 'mcpcell gc ended');
  assert.ok(existsSync(path.join(npx, 'canary@1.0.0', 'keep.txt')),
    'mcpcell gc removed a published install outside the .install-* tree it was removing');
  assert.equal(statSync(npx).mode & 0o777, npxMode, 'the npx cache kept its mode (RemoveTree chmods only what it removes)');
  // Once the racer is gone, the next sweep takes the rest of the tree.
  spawnSync(MCPCELL_BIN, ['gc'], { ...asUser, env, encoding: 'utf8', timeout: 60_000 });
  assert.ok(!existsSync(path.join(npx, `.install-${deadPid}-adv19x`)), 'the tree was removed');
});

test('adv19: `mcpcell gc` leaves an install whose owner is alive, however old its directory', {
  timeout: 60_000,
}, async (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = mkdtempSync('/var/tmp/e2e-adv19-rt-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const asUser = { uid: TEST_UID, gid: TEST_GID };
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.state'), LANG: 'C.UTF-8' };
  // The owner: a live process of the user holding the directory as every
  // mcpcell holds its own (an flock for the install's life, util/work_dir_lock.h):
  // an mcpcell whose install scripts run long.
  const made = path.join(home, '.cache', 'mcpcell', 'npx', '.install-made-adv19y');
  spawnSync('mkdir', ['-p', path.join(made, 'node_modules', 'pkg')], asUser);
  const owner = spawn('flock', [made, 'sleep', '60'], { ...asUser, stdio: 'ignore' });
  t.after(() => owner.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 300));
  const dir = path.join(home, '.cache', 'mcpcell', 'npx', `.install-${owner.pid}-adv19y`);
  spawnSync('mv', [made, dir], asUser);
  spawnSync('touch', ['-d', '2 hours ago', dir], asUser);
  const gc = spawnSync(MCPCELL_BIN, ['gc'], { ...asUser, env, encoding: 'utf8', timeout: 30_000 });
  t.diagnostic((gc.stdout + gc.stderr).split('\n').filter((l) => l.includes('npx')).join('\n'));
  assert.ok(existsSync(path.join(dir, 'node_modules', 'pkg')), 'gc removed the install of a live mcpcell (pid ' + owner.pid + ')');
});
