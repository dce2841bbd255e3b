// Adversary pass adv26 on 03191d7 (adv24's fix fd2970e: root also hides
// every passwd account's listed state directories, only entries that
// account owns). FAILED on main at 03191d7; marked todo so the suite stays green.
//
// LOW-MEDIUM (denial of service on root's launches by any local account, no
// privilege needed; fails closed, nothing leaks): another account's listed
// state directory is treated by root as root's own. McpcellOwnDirs
// (src/util/state_dir.cc:171-177) appends KnownStateDirs() — for root, every
// account's entries (OtherAccountsStateDirs, state_dir.cc:116-131, 138) — and
// launch_plan.cc:202 runs CheckDirNotWritableByCell on each of them, which
// refuses any writable grant at or above it ("lies inside mcpcell's state
// directory ... the cell could plant files there that a later run of mcpcell
// reads as its own"). No run of root's reads another account's state as its
// own, yet the refusal stands. So an unprivileged user who once runs
//   XDG_STATE_HOME=/tmp mcpcell run -- true        (or any shared directory)
// (mcpcell itself records /tmp/mcpcell in ~/.local/state/mcpcell/known-state-dirs;
// a user can also write the list by hand: only "owns the entry" is checked)
// makes every later root launch with --write /tmp (/var/tmp, /dev/shm, a
// group-writable project share, /home) fail with exit 2, for as long as the
// directory exists. The same user can do it for any number of shared
// directories (the list holds ~64 KiB of entries, each one lstat'ed, realpath'ed and
// compared on every root launch, three times and once more per grant).
//   Reproduce: as mcpcell-test, XDG_STATE_HOME=/var/tmp/share mcpcell run -- true
//   (share mode 1777); as root, mcpcell run --write /var/tmp/share -- true: refused.
// Suggested fix: another account's directories are hidden (masked below a
// grant: MaskHiddenDirsBeneath) but not checked as root's own
// (CheckDirNotWritableByCell only for this account's own dirs: tag the
// OwnDir with its owner); and accept another account's entries only at or
// below that account's passwd home, deduplicated, so a list cannot name
// shared directories at all.
//
// Bounded: two short runs; the shared directory is removed after (its
// entry then names nothing and is ignored).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { canActAsTestUser, runAsTestUser, testUserEnv, testUserHome, removeTestUserHomes } from './lib/test_user.mjs';

const shared = [];
after(() => {
  removeTestUserHomes();
  for (const d of shared.splice(0)) spawnSync('rm', ['-rf', '--', d]);
});

test('adv26: another account\'s state directory in a shared directory refuses root\'s --write of that directory', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root and the account mcpcell-test'); return; }
  const share = mkdtempSync('/var/tmp/e2e-adv26-share-');
  shared.push(share);
  chmodSync(share, 0o1777);  // a shared directory, as /tmp is
  const home = testUserHome('adv26-share-home');
  const theirs = runAsTestUser(['run', '--isolate', '--relay=off', '--', '/bin/true'],
    testUserEnv(home, { XDG_STATE_HOME: share }));
  assert.equal(theirs.code, 0, `the other user's run (test setup): ${theirs.stderr.slice(-600)}`);
  const r = await runMcpcell(['run', '--isolate', '--relay=off', '--write', share, '--', '/bin/true']);
  assert.equal(r.code, 0, `root's --write ${share} was refused by what mcpcell-test keeps in it:\n${r.stderr.slice(-800)}`);
});
