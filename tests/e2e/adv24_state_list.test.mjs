// Adversary pass adv24 on 255224a (every state directory of the account is
// (Session 15: tests 1-4 fixed — control bytes refused, lines checked, the
// directory listed where it lies, resolved as written; test 5 is open.)
// hidden from every cell: known-state-dirs). Each test below FAILED on main
// at 5f04c5e and is marked todo so the suite stays green.
//
// 1. MEDIUM: a newline in XDG_STATE_HOME writes lines of its choosing into
//    the account's list. RememberStateDir (src/util/state_dir.cc:179, the
//    `text += norm + "\n"`) writes the path as it is; Lines()
//    (state_dir.cc:47-54) splits the list at every '\n'. A client env block
//    (a repository's .vscode/mcp.json, like adv13's PATH) with
//    XDG_STATE_HOME="$H/s\n$HOME\n$H/t" makes every later launch of the
//    account, in any environment, treat $HOME (or any existing directory) as
//    a state directory: `--read ~/project` is refused, a grant above it masks
//    it. The line exists, so pruning never drops it: one launch denies the
//    account's grants until the user edits the file. And the state directory
//    the launch really used ("$H/s\n$HOME\n$H/t/mcpcell") is listed by no
//    line: a later cell granted its parent reads its logs, records and pins.
//    The same launch appends the path again at every OpenStateDir (it never
//    matches a listed line), growing the list toward its 64 KiB cap.
//    Fix: refuse (fail closed) a state base holding '\n' (or any control
//    byte) in StateBaseForThisUser/RememberStateDir, and in Lines() ignore a
//    line that is not a normalized absolute path.
// 2. MEDIUM: the list records the path as written, normalized lexically,
//    not the directory the kernel opened. XDG_STATE_HOME=$H/link/../s with
//    link -> $H/deep/dir: OpenStateRoot's mkdir/open resolve `link/..` to
//    $H/deep, so the records and logs live in $H/deep/s/mcpcell, while
//    RememberStateDir (state_dir.cc:158, lexically_normal) lists $H/s/mcpcell
//    — a directory that does not exist, dropped at the next rewrite and
//    masking nothing (hidden_dirs.cc:79-85, "nothing is there to hide"). A later
//    default launch with --read $H reads the other launch's stderr copy.
//    The same holds for a symlinked XDG_STATE_HOME whose link is later
//    removed or re-pointed (state_dir.cc:177 PathExists is an lstat of the link path: the
//    entry is pruned while the real directory lives on).
//    Fix: list the directory as opened: after OpenStateRoot, readlink
//    /proc/self/fd/N of the mcpcell fd (or realpath of the base once made)
//    and record that; list both spellings if the written one must stay.
//    The launch's own state directory has the same hole (adv22 fixed `..`
//    only where no symlink precedes it): hidden_dirs.cc:23 Resolved() calls
//    lexically_normal() BEFORE realpath, so `link/..` becomes $H and the
//    mask goes to $H/s/mcpcell (a mount point mcpcell makes there), while
//    the cell of a launch with that XDG_STATE_HOME and --read $H reads
//    $H/deep/s/mcpcell: its own and every earlier record and log.
//    Fix: resolve with realpath on the path as written (the longest existing
//    prefix as written, then normalize only the missing rest), never
//    lexically_normal first; or refuse a state base holding `..`.
// 3. LOW-MEDIUM: the list is read once, at launch. A cell already running
//    with a grant of ~/projects does not hide a state directory another
//    launch makes later below it (XDG_STATE_HOME=~/projects/.state, a
//    client's env block): it reads that launch's stderr copy (and with
//    --write could rewrite its pins) while both run. The new launch checks
//    nothing about grants of live cells (state_dir.cc:191-198 OpenStateDir).
//    Fix: before making a state directory that does not exist yet, refuse it
//    when it lies at or below a grant of a live cell of the account (the
//    records in cells/ name their binds), or only make state directories
//    below the account's own directory (AccountStateDir).
//
// Bounded: short runs as mcpcell-test (lib/test_user.mjs: as root the
// cell's uid does not own the state directory, so its mode hides it anyway);
// every home is removed after, and the lines these tests put into
// mcpcell-test's list name only those homes (gone: pruned, masking nothing).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import {
  asTestUser, canActAsTestUser, removeTestUserHomes, runAsTestUser, startAsTestUser, testUserEnv, testUserHome,
} from './lib/test_user.mjs';

after(removeTestUserHomes);

async function skipUnlessTestUser(t) {
  if (await skipWithoutCell(t)) return true;
  if (!canActAsTestUser()) { t.skip('needs root to act as mcpcell-test'); return true; }
  return false;
}

const tell = (mark) => ['run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', `echo ${mark} >&2`];

test('adv24: a newline in XDG_STATE_HOME lists any existing directory as a state directory (every later grant of it refused)', {
  timeout: 120_000,
}, async (t) => {
  if (await skipUnlessTestUser(t)) return;
  const home = testUserHome('adv24-nl-dos', ['work']);
  const xdg = `${home}/s\n${home}/work\n${home}/t`;
  const first = runAsTestUser(tell('ADV24-NL-1'), testUserEnv(home, { XDG_STATE_HOME: xdg }));
  assert.equal(first.code, 0, `the launch with the crafted XDG_STATE_HOME (test setup): ${first.stderr.slice(-600)}`);
  const r = runAsTestUser(['run', '--isolate', '--relay=off', '--read', `${home}/work`, '--', '/bin/true'], testUserEnv(home));
  assert.equal(r.code, 0, `a later launch in the usual environment was refused its grant of ${home}/work:\n${r.stderr.slice(-600)}`);
});

test('adv24: the state directory a launch used under an XDG_STATE_HOME holding a newline is hidden by no later launch', {
  timeout: 120_000,
}, async (t) => {
  if (await skipUnlessTestUser(t)) return;
  const mark = 'ADV24-NL-STDERR-5150';
  const home = testUserHome('adv24-nl-leak');
  const xdg = `${home}/s\n`;
  const first = runAsTestUser(tell(mark), testUserEnv(home, { XDG_STATE_HOME: xdg }));
  assert.equal(first.code, 0, `the launch with the crafted XDG_STATE_HOME (test setup): ${first.stderr.slice(-600)}`);
  const r = runAsTestUser(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/sh', '-c',
    'cat "$1"/s*/mcpcell/logs/* 2>&1; echo "[end]"', 'sh', home], testUserEnv(home));
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(mark), `a cell granted ${home} read the stderr copy kept under XDG_STATE_HOME=${JSON.stringify(xdg)}`);
});

test('adv24: XDG_STATE_HOME with `..` after a symlink is listed where it is not: a later cell reads its logs', {
  timeout: 120_000,
}, async (t) => {
  if (await skipUnlessTestUser(t)) return;
  const mark = 'ADV24-DOTDOT-STDERR-6160';
  const home = testUserHome('adv24-dotdot', ['deep/dir']);
  runAsTestUserShell(`ln -s "${home}/deep/dir" "${home}/link"`);
  const first = runAsTestUser(tell(mark), testUserEnv(home, { XDG_STATE_HOME: `${home}/link/../s` }));
  assert.equal(first.code, 0, `the launch under ${home}/link/../s (test setup): ${first.stderr.slice(-600)}`);
  const r = runAsTestUser(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/sh', '-c',
    'echo "[list] $(ls -A "$1"/deep/s/mcpcell 2>&1)"; cat "$1"/deep/s/mcpcell/logs/* 2>&1; echo "[end]"', 'sh', home],
  testUserEnv(home));
  t.diagnostic(r.stdout.split('\n')[0]);
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(mark), `a cell granted ${home} read the stderr copy in ${home}/deep/s/mcpcell (listed as ${home}/s/mcpcell)`);
});

test('adv24: a launch under XDG_STATE_HOME=link/../s does not mask its own state directory from its cell', {
  timeout: 120_000,
}, async (t) => {
  if (await skipUnlessTestUser(t)) return;
  const mark = 'ADV24-DOTDOT-OWN-6161';
  const home = testUserHome('adv24-dotdot-own', ['deep/dir']);
  runAsTestUserShell(`ln -s "${home}/deep/dir" "${home}/link"`);
  const env = testUserEnv(home, { XDG_STATE_HOME: `${home}/link/../s` });
  const first = runAsTestUser(tell(mark), env);
  assert.equal(first.code, 0, `the first launch under ${home}/link/../s (test setup): ${first.stderr.slice(-600)}`);
  const r = runAsTestUser(['run', '--isolate', '--relay=off', '--read', home, '--', '/bin/sh', '-c',
    'echo "[list] $(ls -A "$1"/deep/s/mcpcell 2>&1)"; cat "$1"/deep/s/mcpcell/logs/* 2>&1; echo "[end]"', 'sh', home], env);
  t.diagnostic(r.stdout.split('\n')[0]);
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(mark), `the cell of a launch under ${home}/link/../s read its state directory ${home}/deep/s/mcpcell`);
});

test('adv24: a running cell reads a state directory another launch makes below its grant after it started', {
  todo: 'adv24: known-state-dirs is read at launch; a later launch makes its state dir inside a live grant',
  timeout: 120_000,
}, async (t) => {
  if (await skipUnlessTestUser(t)) return;
  const mark = 'ADV24-LATE-STDERR-7170';
  const home = testUserHome('adv24-late', ['projects']);
  // The cell waits for the other launch's log, then prints it (bounded: 40 s).
  const watcher = startAsTestUser(['run', '--isolate', '--relay=off', '--read', `${home}/projects`, '--', '/bin/sh', '-c',
    'echo "[up]"; i=0; while [ $i -lt 200 ]; do if cat "$1"/.state/mcpcell/logs/* 2>/dev/null | grep -q .; then ' +
    'cat "$1"/.state/mcpcell/logs/*; break; fi; sleep 0.2; i=$((i+1)); done; echo "[end]"', 'sh', `${home}/projects`],
  testUserEnv(home), 60_000);
  for (let i = 0; i < 100 && !watcher.stdout().includes('[up]'); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(watcher.stdout().includes('[up]'), 'the watching cell started (test setup)');
  const other = runAsTestUser(tell(mark), testUserEnv(home, { XDG_STATE_HOME: `${home}/projects/.state` }));
  t.diagnostic(`the other launch: exit ${other.code}`);
  const r = await watcher.done;
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(mark), `a live cell granted ${home}/projects read the stderr copy of a launch with XDG_STATE_HOME=${home}/projects/.state`);
});

function runAsTestUserShell(cmd) {
  const r = spawnSync('/bin/sh', ['-c', cmd], { ...asTestUser });
  assert.equal(r.status, 0, `as mcpcell-test: ${cmd}`);
}
