// Adversary pass adv22: mcpcell's state directory, not made yet and not
// lexically below a grant, is not masked; made by the same launch, it shows
// in that cell, which reads every later run's stderr copy while it lives.
//
// Finding (MEDIUM): MaskHiddenDirsBeneath (src/cell/hidden_dirs.cc:55) masks
// the state directory in a grant only when its path as written, or its
// realpath, lies at or below the grant. Resolved() (hidden_dirs.cc:19-22)
// falls back to the path as written when the directory does not exist, so
// on a first run it sees neither:
//   - ~/.local/state a symlink to /data/state (the very case the comment at
//     hidden_dirs.cc:54 names), /data/state/mcpcell not made yet, a grant of
//     /data/state (or /data);
//   - XDG_STATE_HOME=$HOME/a/../b (not normalized), a grant of $HOME/b.
// No mask is added and MakePrivateDirs is not called; the launch then makes
// the directory itself (its record and stderr copy, OpenStateDir), under the
// cell's bind of the grant. A normal user's cell runs as that user, so the
// 0700 mode is no bar: the server reads mcpcell's records, pins and the
// stderr copy of every other server launched while it runs (the first server
// a client starts lives as long as the client).
//   Reproduce: as a normal user with ~/.local/state -> ~/data (empty):
//   `mcpcell run --read ~/data -- sh -c 'sleep 5; cat ~/data/mcpcell/logs/*'`
//   and meanwhile `mcpcell run -- sh -c 'echo SECRET >&2'`: the first prints
//   SECRET.
//   Suggested fix: resolve the longest existing prefix of the state path
//   (realpath of the nearest existing ancestor, the rest normalized), or
//   make the state directory (OpenStateDir, through the same resolution the
//   launch will use) before any grant is compared with it; CheckHiddenDirs
//   OutOfReach (hidden_dirs.cc:68) has the same blind spot for binds.
//
// Bounded: two short runs, one polling at most 200 times; homes removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { until } from './lib/npx_in_place.mjs';
import {
  asTestUser, canActAsTestUser, removeTestUserHomes, runAsTestUser, startAsTestUser, testUserEnv, testUserHome,
} from './lib/test_user.mjs';

after(removeTestUserHomes);

const MARK = 'ADV22-VICTIM-STDERR-5150';

// Polls the grant for another run's stderr copy; "ready" once its cell runs.
const PEEK = 'echo ready; i=0; while [ $i -lt 200 ]; do ' +
  'if grep -rh ADV22-VICTIM "$1"/mcpcell/logs/ 2>/dev/null; then echo FOUND; break; fi; sleep 0.1; i=$((i+1)); done; ' +
  'echo "[end] $(ls -A "$1"/mcpcell 2>&1)"';

/** A cell granted `grant` polls it while another run writes MARK to its stderr: what the first printed. */
async function peekWhileAnotherRuns(env, grant) {
  const peeker = startAsTestUser(['run', '--isolate', '--relay=off', '-v', '--read', grant, '--', '/bin/sh', '-c', PEEK,
    'sh', grant], env, 90_000);
  assert.ok(await until(() => peeker.stdout().includes('ready'), 600), 'the peeking cell started (test setup)');
  const victim = runAsTestUser(['run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', `echo ${MARK} >&2`], env);
  assert.equal(victim.code, 0, `the other run (test setup): ${victim.stderr.slice(-600)}`);
  return peeker.done;
}

test('adv22: a state directory behind a symlink, made by the launch itself, is not masked in a grant of its target', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = testUserHome('adv22-st-link', ['.local', 'data']);
  assert.equal(spawnSync('ln', ['-s', `${home}/data`, `${home}/.local/state`], asTestUser).status, 0, 'test setup');
  const r = await peekWhileAnotherRuns(testUserEnv(home), `${home}/data`);
  t.diagnostic(r.stdout.trim().split('\n').slice(-2).join(' | '));
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(MARK), `a cell granted ${home}/data (= ~/.local/state) read another run's stderr copy`);
});

test('adv22: XDG_STATE_HOME with ".." hides no state directory the launch makes under a grant', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = testUserHome('adv22-st-dots', ['a', 'b']);
  const r = await peekWhileAnotherRuns(testUserEnv(home, { XDG_STATE_HOME: `${home}/a/../b` }), `${home}/b`);
  t.diagnostic(r.stdout.trim().split('\n').slice(-2).join(' | '));
  assert.match(r.stdout, /\[end\]/, r.stderr.slice(-800));
  assert.ok(!r.stdout.includes(MARK), `a cell granted ${home}/b (= XDG_STATE_HOME a/../b) read another run's stderr copy`);
});
