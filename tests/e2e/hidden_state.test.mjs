// mcpcell's state directory holds every run's record, the copy of every
// server's stderr and the tool pins (src/cell/hidden_dirs.h). A server
// granted the directory above it (--read ~, /var/lib for root) must not read
// what another server wrote to its stderr: it is masked in every grant above
// it — --force-credentials included, which is about the user's credentials —
// and a grant at or inside it is refused.

import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const MARK = 'HIDDEN-STATE-STDERR-MARK-4711';

/** A home with mcpcell's state under it, and one run's stderr copy in it. */
async function homeWithALog() {
  const home = makeTempDir('hidden-home');
  const state = path.join(home, '.local', 'state');
  mkdirSync(state, { recursive: true });
  const env = { ...process.env, XDG_STATE_HOME: state };
  const first = await runMcpcell(['run', '--isolate', '--relay=off', '--', '/bin/sh', '-c', `echo ${MARK} >&2`], { env });
  assert.equal(first.code, 0, first.stderr);
  const logs = path.join(state, 'mcpcell', 'logs');
  assert.ok(readdirSync(logs).length >= 1, 'the first run left its stderr copy');
  return { home, env, own: path.join(state, 'mcpcell'), logs };
}

for (const extra of [[], ['--force-credentials']]) {
  test(`a cell granted the home above mcpcell's state reads no other run's stderr copy ${extra.join(' ')}`, {
    timeout: 60_000,
  }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const { home, env, own } = await homeWithALog();
    const r = await runMcpcell(['run', '--isolate', '--relay=off', '-v', ...extra, '--read', home, '--', '/bin/sh', '-c',
      'echo "[list] $(ls -A "$1" 2>&1)"; cat "$1"/logs/* 2>&1; grep -r HIDDEN-STATE "$1" 2>&1; echo "[end]"', 'sh', own],
    { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\[end\]/);
    // Empty inside (a mask), or not listable (as root the cell's uid is not
    // the directory's owner, and the mask is mode 0): never its entries.
    assert.doesNotMatch(r.stdout, /\[list\].*\b(logs|cells)\b/, r.stdout);
    assert.ok(!r.stdout.includes(MARK), r.stdout);
    assert.match(r.stderr, /masked (credential location|mcpcell's state directory[^/]*) \S*\/\.local\/state\/mcpcell inside/);
  });
}

test('a grant of mcpcell\'s state directory, or of a directory inside it, is refused', {
  timeout: 60_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { env, own, logs } = await homeWithALog();
  for (const grant of [own, logs]) {
    const r = await runMcpcell(['run', '--isolate', '--relay=off', '--read', grant, '--', '/bin/sh', '-c',
      'cat "$1"/* 2>&1; echo ran', 'sh', logs], { env });
    assert.ok([EXIT.usage, EXIT.denied].includes(r.code), `exit ${r.code}: ${r.stderr}`);
    assert.ok(!r.stdout.includes('ran') && !r.stdout.includes(MARK), r.stdout);
    assert.match(r.stderr, /mcpcell's state directory/, r.stderr);
  }
});
