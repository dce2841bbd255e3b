// Adversary pass adv24 on 255224a: root's cells read the state directory
// another account kept under its own XDG_STATE_HOME (fixed in session 15:
// root reads each passwd account's list, entries that account owns). FAILED on main at
// 5f04c5e; marked todo so the suite stays green.
//
// MEDIUM (mcpcell run as root: a system service, a shared host's admin):
// adv22 masked every account's default state directory by name
// (".local/state/mcpcell" below a grant), and 255224a lists the others — but
// only in each account's own list: McpcellOwnDirs
// (src/util/state_dir.cc:104-108) reads KnownStateDirs() of the launching
// account alone (AccountStateDir(): root's /var/lib/mcpcell). As root, a
// grant owned by another user is id-mapped to the cell's uid, so the 0700
// mode of alice's $XDG_STATE_HOME/mcpcell (listed in
// /home/alice/.local/state/mcpcell/known-state-dirs, not in root's) is no
// bar: a root cell granted /home/alice (or /home, /srv) reads her records
// and `mcpcell logs` copies and, with --write, forges her tool pins.
//   Reproduce: as alice, XDG_STATE_HOME=~/xdg mcpcell run -- sh -c 'echo
//   SECRET >&2'; as root `mcpcell run --read /home/alice -- sh -c 'cat
//   /home/alice/xdg/mcpcell/logs/*'` prints SECRET.
// Fix: hide every directory named "mcpcell" below a grant that holds
// "cells"/"logs"/"pins" owned 0700 by its directory's owner (by shape, like
// the name masks); or, for root, read the known-state-dirs of each passwd
// home below a grant (getpwent) too; or refuse to id-map a directory whose
// owner has a known-state-dirs listing something inside the grant.
//
// Bounded: two short runs; the home is removed after.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { canActAsTestUser, removeTestUserHomes, runAsTestUser, testUserEnv, testUserHome } from './lib/test_user.mjs';

after(removeTestUserHomes);

const MARK = 'ADV24-OTHER-ACCOUNT-XDG-8181';

test('adv24: a root launch granted another user\'s home reads that user\'s state directory under its XDG_STATE_HOME', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root and the account mcpcell-test'); return; }
  const home = testUserHome('adv24-other-xdg', ['xdg']);
  const theirs = runAsTestUser(['run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', `echo ${MARK} >&2`],
    testUserEnv(home, { XDG_STATE_HOME: `${home}/xdg` }));
  assert.equal(theirs.code, 0, `the other user's run (test setup): ${theirs.stderr.slice(-600)}`);
  const r = await runMcpcell(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/sh', '-c',
    'echo "[list] $(ls -A "$1"/xdg/mcpcell 2>&1)"; cat "$1"/xdg/mcpcell/logs/* 2>&1; echo "[end]"', 'sh', home]);
  t.diagnostic(r.stdout.split('\n')[0]);
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(MARK), `root's cell granted ${home} read mcpcell-test's stderr copy under ${home}/xdg/mcpcell`);
});
