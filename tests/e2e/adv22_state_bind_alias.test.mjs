// Adversary pass adv22: a bind mount of the home elsewhere (an alias of the
// state directory's path) is a grant with no mask in it.
//
// Finding (LOW-MEDIUM; needs an existing bind mount, which a normal user
// cannot make): MaskHiddenDirsBeneath and CheckHiddenDirsOutOfReach
// (src/cell/hidden_dirs.cc:55 and :73-79) compare paths only — the state
// directory's as written and its realpath(3) — with the grant's realpath.
// realpath does not see through bind mounts: with /home bind-mounted at
// /srv/home (or a home exported to a container path, /var/lib bound into a
// chroot, an NFS automount under two names), a grant of the alias holds the
// state directory under a name no check recognizes, unmasked. A normal
// user's cell runs as that user: it reads every record, pin and stderr copy
// (`mcpcell logs`) of the user's other servers.
//   Reproduce: as root `mount --bind /home/u /srv/alias`; as u
//   `mcpcell run --read /srv/alias -- sh -c 'cat /srv/alias/.local/state/mcpcell/logs/*'`
//   prints what u's other servers wrote to stderr.
//   Suggested fix: identify the state directory by (st_dev, st_ino) as well:
//   for a bind grant on the same st_dev, map both through
//   /proc/self/mountinfo (mount root + path within the filesystem) and mask
//   when the state directory's filesystem path lies below the grant's; or,
//   simplest and closed, mask by inode after the cell's mounts are made —
//   walk the state directory's ancestors' (dev, ino) and refuse any bind
//   whose source has one of them as (dev, ino) of a directory it contains,
//   checked with open_tree/statx on the mount rather than on names.
//
// Bounded: two short runs; the bind is undone and the home removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmdirSync } from 'node:fs';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { canActAsTestUser, removeTestUserHomes, runAsTestUser, testUserEnv, testUserHome } from './lib/test_user.mjs';

after(removeTestUserHomes);

const MARK = 'ADV22-ALIAS-STDERR-6502';

test('adv22: a grant of a bind-mount alias of the home reads mcpcell\'s state directory unmasked', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root to act as mcpcell-test and to bind-mount'); return; }
  const home = testUserHome('adv22-alias-home');
  const env = testUserEnv(home);
  const victim = runAsTestUser(['run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', `echo ${MARK} >&2`], env);
  assert.equal(victim.code, 0, `the other run (test setup): ${victim.stderr.slice(-600)}`);
  const alias = mkdtempSync('/var/tmp/e2e-adv22-alias-');
  chmodSync(alias, 0o755);
  const bound = spawnSync('mount', ['--bind', home, alias]);
  if (bound.status !== 0) { rmdirSync(alias); t.skip(`mount --bind failed: ${bound.stderr}`); return; }
  try {
    const r = runAsTestUser(['run', '--isolate', '--relay=off', '--read', alias, '--', '/bin/sh', '-c',
      'echo "[list] $(ls -A "$1"/.local/state/mcpcell 2>&1)"; cat "$1"/.local/state/mcpcell/logs/* 2>&1; echo "[end]"',
      'sh', alias], env);
    t.diagnostic(r.stdout.split('\n')[0]);
    assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
    assert.ok(!r.stdout.includes(MARK), `a cell granted ${alias} (a bind of ${home}) read another run's stderr copy`);
  } finally {
    spawnSync('umount', [alias]);
    rmdirSync(alias);
  }
});
