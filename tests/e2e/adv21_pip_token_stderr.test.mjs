// Adversary pass adv21: pip's output names a path-token index whole.
//
// Finding (MEDIUM): a private Python index that takes its token in the URL
// path (Gemfury: `index-url = https://pypi.fury.io/TOKEN/acme/`, the same
// shape as npm's `https://npm.fury.io/TOKEN/acme/`) has its token printed
// on mcpcell's stderr by every uvx:// install: the host pip says "Looking
// in indexes: <index-url>" (pip hides a URL's password, never its path),
// and names the URL again in its errors. mcpcell's stderr is the MCP
// client's log of the server (kept on disk by every client), the user's
// terminal, and a launch's run log. npm's output got masks for exactly
// this (adv12, adv14, adv16: HostToolRun::masked, MaskedEcho); pip's runs
// get none (src/source/uvx_install.cc:111-134, Run builds its HostToolRun
// with `masked` empty), so the token reaches the log of every client that
// starts the server.
//   Reproduce: ~/.config/pip/pip.conf `index-url =
//   http://127.0.0.1:P/Tk<hex>9/simple/` (an index serving below that
//   path); `mcpcell install uvx://x@1.0` prints "Looking in indexes:
//   http://127.0.0.1:P/Tk<hex>9/simple/".
//   Suggested fix: take the masks from pip's index settings as npm's are
//   taken from the npmrc copies (TokenPieces of index-url, extra-index-url,
//   find-links, from PipSettings and the PIP_* index variables) and pass
//   them as HostToolRun::masked to every pip run (pip index versions too).
//
// Bounded: one small wheel, one install.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { startFileIndex } from './lib/file_index.mjs';
import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { E2E_DIR } from './lib/paths.mjs';
import { pipConfigHome } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(3).toString('hex');
after(removeTempDirs);

test('adv21: a path-token Python index\'s token is not printed by the host pip on mcpcell\'s stderr', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const token = `Tk${randomBytes(12).toString('hex')}9`;
  const dist = `e2e-adv21-pytok-${id}`;
  const wheelDir = makeTempDir('adv21-pytok');
  const module = path.join(wheelDir, 'adv21_pytok.py');
  writeFileSync(module, 'def main():\n    pass\n');
  const file = execFileSync('/usr/bin/python3', [path.join(E2E_DIR, 'lib', 'make_wheel.py'), wheelDir, dist, '1.0', module],
    { encoding: 'utf8' }).trim();
  const index = await startFileIndex(dist, new Map([[file, readFileSync(path.join(wheelDir, file))]]), [file], { prefix: `/${token}` });
  t.after(() => index.close());
  const { env } = pipConfigHome(index.url, 'adv21-pytok');
  const r = await runMcpcell(['install', `uvx://${dist}@1.0`], { env, guardMs: 150_000 });
  t.diagnostic(`exit ${r.code}\n${r.stderr.split('\n').slice(-6).join('\n')}`);
  assert.ok(index.requests.some((u) => u.includes('/files/')), `pip fetched the wheel through the token index (test setup): ${index.requests.join(', ')}`);
  assert.ok(!r.stderr.includes(token), `mcpcell's stderr (the client's log) holds the index's token:\n${
    r.stderr.split('\n').filter((l) => l.includes(token)).join('\n')}`);
});
