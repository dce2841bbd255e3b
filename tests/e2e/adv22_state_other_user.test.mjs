// Adversary pass adv22: a root launch granted another user's home reads
// that user's mcpcell state directory (records, pins, stderr copies).
//
// Finding (MEDIUM, for mcpcell run as root — a system service, a shared
// host's admin): McpcellOwnDirs (src/util/state_dir.cc:31-52) lists the
// state directories of the launching user only (/var/lib/mcpcell and
// ~/.local/state/mcpcell of $HOME and root's passwd home). As root a grant
// whose owner is not the cell's host uid is id-mapped to it
// (cell/native/idmap_mount.h), so the 0700 mode of another user's
// ~/.local/state/mcpcell is no bar either: a server granted /home (or one
// user's home, or /var/tmp holding homes) reads every user's `mcpcell logs`
// copies and records. Credentials in the same grant are masked by name
// (~/.ssh of that home reads "Permission denied"), so the gap is specific
// to the state directory. With --write the cell also writes there: it can
// forge that user's tool pins (the relay's check that a server's tools did
// not change) and records.
//   Reproduce: as alice, run any server that writes SECRET to stderr; as
//   root `mcpcell run --read /home/alice -- sh -c 'cat
//   /home/alice/.local/state/mcpcell/logs/*'` prints SECRET.
//   Suggested fix: mask by name as the credential locations are: every
//   ".local/state/mcpcell" (and "var/lib/mcpcell") found below a grant, at
//   least in each passwd home under it (getpwent), whoever owns it; or
//   refuse to id-map a directory that holds one.
//
// Bounded: two short runs; the home is removed after.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { canActAsTestUser, removeTestUserHomes, runAsTestUser, testUserEnv, testUserHome } from './lib/test_user.mjs';

after(removeTestUserHomes);

const MARK = 'ADV22-OTHER-USER-STDERR-6809';

test('adv22: a root launch granted another user\'s home does not read that user\'s mcpcell state', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root and the account mcpcell-test'); return; }
  const home = testUserHome('adv22-other-user');
  const theirs = runAsTestUser(['run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', `echo ${MARK} >&2`], testUserEnv(home));
  assert.equal(theirs.code, 0, `the other user's run (test setup): ${theirs.stderr.slice(-600)}`);
  const r = await runMcpcell(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/sh', '-c',
    'echo "[list] $(ls -A "$1"/.local/state/mcpcell 2>&1)"; cat "$1"/.local/state/mcpcell/logs/* 2>&1; echo "[end]"',
    'sh', home]);
  t.diagnostic(r.stdout.split('\n')[0]);
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(MARK), `root's cell granted ${home} read mcpcell-test's stderr copy`);
});

test('adv22: a root launch granted another user\'s home to write forges nothing in that user\'s mcpcell state', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root and the account mcpcell-test'); return; }
  const home = testUserHome('adv22-other-user-w');
  const theirs = runAsTestUser(['run', '--isolate', '--relay=off', '--', '/bin/true'], testUserEnv(home));
  assert.equal(theirs.code, 0, `the other user's run (test setup): ${theirs.stderr.slice(-600)}`);
  const forged = `${home}/.local/state/mcpcell/pins/adv22-forged`;
  const r = await runMcpcell(['run', '--isolate', '--relay=off', '--write', home, '--', '/bin/sh', '-c',
    'mkdir -p "${1%/*}" 2>&1; echo forged > "$1" 2>&1; echo "[end]"', 'sh', forged]);
  t.diagnostic(`exit ${r.code}`);
  assert.ok(!existsSync(forged), `root's cell granted --write ${home} wrote ${forged}`);
});
