// Adversary pass adv14 (session 14): npm's global npmrc under /usr masked
// in every native cell (src/cell/spec_builder.cc: /usr/etc/npmrc and
// /usr/local/etc/npmrc bound to /dev/null).
//
// Finding:
//   low    a grant of the directory that holds one (`--read /usr/local/etc`,
//          `--write /usr/local/etc`, `--read /usr/etc`) is refused with
//          "mount target .../npmrc: named twice (masked and masked); keep
//          one": the built-in mask and the grant's credential mask collide.
//          `--read /usr/local/etc/npmrc --force-credentials` (the user's
//          consent) fails the same way ("masked and --read").
// Held: the grant never shows the file's contents in the cell (the refusal
// is fail-closed), and `--read /usr/lib/node_modules/npm` leaves both masked.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const ROOT = makeTempDir('adv14-npmrc');
const POLICY = path.join(ROOT, 'policy.json');
writeReadableFile(POLICY, JSON.stringify({ rules: [], default: 'isolate' }));
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8' };
const SHOW = 'for f in /usr/etc/npmrc /usr/local/etc/npmrc; do printf "%s=[%s]\\n" "$f" "$(cat $f 2>/dev/null)"; done';

test('adv14: `--read /usr/local/etc` (or --write, or --read /usr/etc) is refused: the npmrc mask and the grant\'s credential mask name the same target twice', {
  skip: !existsSync('/usr/local/etc/npmrc') && !existsSync('/usr/etc/npmrc') && 'no global npmrc under /usr',
}, async () => {
  const failed = [];
  for (const grant of [['--read', '/usr/local/etc'], ['--write', '/usr/local/etc'], ['--read', '/usr/etc'], ['--read', '/usr/local/etc/npmrc', '--force-credentials']]) {
    if (!existsSync(grant[1])) continue;
    const r = await runMcpcell(['run', '--policy', POLICY, ...grant, '--', '/bin/sh', '-c', SHOW], { input: '', env, guardMs: 30_000 });
    if (r.code !== 0) failed.push(`${grant.join(' ')}: exit ${r.code}: ${r.stderr.trim().split('\n').pop()}`);
  }
  assert.deepEqual(failed, []);
});

test('adv14 held: with a grant of npm\'s own directory, both global npmrc files read empty in the cell', async () => {
  const r = await runMcpcell(['run', '--policy', POLICY, '--read', '/usr/lib/node_modules/npm', '--', '/bin/sh', '-c', SHOW], { input: '', env, guardMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\/usr\/etc\/npmrc=\[\]/);
  assert.match(r.stdout, /\/usr\/local\/etc\/npmrc=\[\]/);
});
