// Adversary pass adv22: the state directory another launch of the same
// user made under a different XDG_STATE_HOME is hidden from no cell.
//
// Fixed in session 15 (the suggested fix below: util/state_dir.h
// RememberStateDir, KnownStateDirs). Finding (LOW-MEDIUM): McpcellOwnDirs (src/util/state_dir.cc:31-52) lists
// the state directory of this launch's environment (XDG_STATE_HOME, else
// ~/.local/state) and ~/.local/state/mcpcell of $HOME and the passwd home.
// A user whose launches do not all see the same XDG_STATE_HOME — set in
// ~/.profile but not in the desktop session that starts the MCP client, or
// set by one client's server config (`env` block) and not another's — has
// state directories this launch does not know: a cell granted the home
// reads the records, pins and stderr copies (`mcpcell logs`) of the other
// client's servers, unmasked (a normal user's cell runs as that user).
//   Reproduce: `XDG_STATE_HOME=~/xdg mcpcell run -- sh -c 'echo SECRET >&2'`;
//   then, without XDG_STATE_HOME, `mcpcell run --read ~ -- sh -c 'cat
//   ~/xdg/mcpcell/logs/*'` prints SECRET.
//   Suggested fix: keep one list of every state directory this user's
//   launches used, in a place that does not depend on the environment (the
//   passwd home's ~/.local/state/mcpcell/known-state-dirs, appended by
//   OpenStateDir when it makes a new one), and hide each of them
//   (McpcellOwnDirs reads it); or refuse a state base that is not the one
//   recorded there.
//
// Bounded: two short runs; the home is removed after.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { canActAsTestUser, removeTestUserHomes, runAsTestUser, testUserEnv, testUserHome } from './lib/test_user.mjs';

after(removeTestUserHomes);

const MARK = 'ADV22-OTHER-CLIENT-STDERR-8086';

test('adv22: a cell granted the home reads no state directory another launch made under its XDG_STATE_HOME', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = testUserHome('adv22-other-xdg', ['xdg-state']);
  const other = runAsTestUser(['run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', `echo ${MARK} >&2`],
    testUserEnv(home, { XDG_STATE_HOME: `${home}/xdg-state` }));
  assert.equal(other.code, 0, `the other client's run (test setup): ${other.stderr.slice(-600)}`);
  const r = runAsTestUser(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/sh', '-c',
    'echo "[list] $(ls -A "$1"/xdg-state/mcpcell 2>&1)"; cat "$1"/xdg-state/mcpcell/logs/* 2>&1; echo "[end]"', 'sh', home],
  testUserEnv(home));
  t.diagnostic(r.stdout.split('\n')[0]);
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(MARK), `a cell granted ${home} read the stderr copy of a launch with XDG_STATE_HOME=${home}/xdg-state`);
});
