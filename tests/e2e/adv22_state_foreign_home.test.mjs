// Adversary pass adv22: a root launch whose HOME is another user's home
// (sudo -E, sudo --preserve-env=HOME, su without -l) makes root-owned 0700
// directories in that home when granted it, and then fails.
//
// Finding (LOW): McpcellOwnDirs (src/util/state_dir.cc:46-50) lists
// $HOME/.local/state/mcpcell as a hidden state directory for root too (the
// pin directory's default), and MaskHiddenDirsBeneath calls MakePrivateDirs
// (src/cell/hidden_dirs.cc:56, 26-33) on it before masking it: every missing
// component is made by root, mode 0700. With HOME=/home/alice and a grant
// of /home/alice (`sudo -E mcpcell run --read ~ ...`), alice's ~/.local and
// ~/.local/state become root's and unreadable to her (pip --user, XDG state
// of every desktop program, and her own mcpcell then fail), and the launch
// itself fails ("open the path to mask (as the cell user) ... EACCES").
//   Reproduce: as root, HOME=/home/alice (no ~/.local yet),
//   `mcpcell run --read /home/alice -- true`; ls -ld /home/alice/.local:
//   drwx------ root root.
//   Suggested fix: make no directory in order to mask it: a missing state
//   directory needs a mask only where the launch itself would make it (its
//   own state base, made first by OpenStateDir); for the other listed
//   directories mask what exists (or mask the nearest existing ancestor
//   with an empty tmpfs when a component is missing) and never mkdir in a
//   directory the caller does not own.
//
// Bounded: one short run; the home is removed after.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { TEST_UID, canActAsTestUser, removeTestUserHomes, testUserHome } from './lib/test_user.mjs';

after(removeTestUserHomes);

test('adv22: a root launch granted the HOME it was given makes no root-owned directory in another user\'s home', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root and the account mcpcell-test'); return; }
  const home = testUserHome('adv22-foreign-home');
  const r = await runMcpcell(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/true'],
    { env: { ...process.env, HOME: home } });
  t.diagnostic(`exit ${r.code}: ${r.stderr.split('\n').filter((l) => !l.includes('warning')).slice(-2).join(' | ')}`);
  let owner = TEST_UID;
  try { owner = statSync(`${home}/.local`).uid; } catch { /* not made: as it should be */ }
  assert.equal(owner, TEST_UID, `${home}/.local was made by uid ${owner} in the home of uid ${TEST_UID}`);
  assert.equal(r.code, 0, `the launch failed: ${r.stderr.slice(-600)}`);
});
