// Adversary pass adv22: XDG_STATE_HOME written with a trailing slash (or a
// doubled one) makes every launch with a grant of the home fail.
//
// Finding (LOW; fails closed, availability): McpcellOwnDirs
// (src/util/state_dir.cc:37-41) keeps one entry per path string, so
// "$HOME/.local/state/" + "/mcpcell" and the ~/.local/state default it adds
// for $HOME are two entries for one directory; MaskHiddenDirsBeneath
// (src/cell/hidden_dirs.cc:52-64) masks each, and the two tmpfs masks on
// one target refuse the launch: "mount target ...: named twice (masked and
// masked); keep one". `export XDG_STATE_HOME=$HOME/.local/state/` is a
// common way to write it; every server granted ~ (or anything above the
// state directory) then fails to start, with a message the user cannot act
// on (no flag keeps one).
//   Reproduce: `XDG_STATE_HOME=$HOME/.local/state/ mcpcell run --read ~ -- true`.
//   Suggested fix: normalize each path in McpcellOwnDirs (lexically, or
//   compare resolved paths) before the dedup, and dedup the masks by target
//   in MaskHiddenDirsBeneath.
//
// Bounded: two short runs; the home is removed after.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { canActAsTestUser, removeTestUserHomes, runAsTestUser, testUserEnv, testUserHome } from './lib/test_user.mjs';

after(removeTestUserHomes);

test('adv22: XDG_STATE_HOME with a trailing slash does not refuse a grant of the home', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = testUserHome('adv22-slash', ['.local/state']);
  const env = testUserEnv(home, { XDG_STATE_HOME: `${home}/.local/state/` });
  const r = runAsTestUser(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/sh', '-c', 'echo ran'], env);
  t.diagnostic(r.stderr.split('\n').filter((l) => l.includes('named twice')).join(' | '));
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr.slice(-600)}`);
  assert.match(r.stdout, /ran/);
});
