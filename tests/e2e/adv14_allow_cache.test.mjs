// Adversary pass adv14 (session 14): what an allow run of npx:// / uvx://
// accepts from the account's package cache, filled by an earlier run under
// other settings (src/cli/launch_plan.cc RefuseForeignInstallOnAPlainRun,
// src/source/public_npm.cc WhyInstallIsNotPublic). The attacker sets the
// environment of one earlier mcpcell run (`mcpcell install`, an isolated
// run: another entry's env block); the allow run itself is clean.
//
// Findings:
//   high   uvx://: the after-install check is npx:// only. `mcpcell install
//          uvx://PKG@V` (or an isolated run) with PIP_INDEX_URL (or a
//          pip.conf) puts another index's wheel in the account's cache; a
//          later clean allow run of the trusted uvx://PKG@V runs it with no cell.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ROOT = makeTempDir('adv14-cache');
const ID = `${process.pid}${Date.now() % 100000}`;
const env = (extra = {}) => ({ PATH: BASE_PATH, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', ...extra });

const cleanup = [];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function trusting(source) {
  const p = path.join(ROOT, `${n++}-policy.json`);
  writeReadableFile(p, JSON.stringify({ trusted_sources: [source], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  return p;
}

test('adv14: uvx:// cache filled by `mcpcell install` (or an isolated run) with PIP_INDEX_URL runs on a later clean allow run with no cell (the after-install check is npx:// only)', {
  timeout: 120_000,
  todo: 'adv14: RefuseForeignInstallOnAPlainRun checks npx:// only; a uvx:// entry from another index runs on an allow run',
}, async (t) => {
  const ran = [];
  for (const [i, how] of ['install', 'run --isolate'].entries()) {
    const version = `14.${ID}.${i}`;
    const idx = await startIndex([version]);
    t.after(() => idx.close());
    const entry = path.join(ACCOUNT_CACHE, 'uvx', `${PY_PROJECT}@${version}`);
    cleanup.push(entry);
    const first = how === 'install' ? ['install', `uvx://${PY_PROJECT}@${version}`] : ['run', '--isolate', `uvx://${PY_PROJECT}@${version}`];
    const a = await runMcpcell(first, { input: '', env: env({ PIP_INDEX_URL: idx.url, PIP_RETRIES: '0' }), guardMs: 55_000 });
    const asked = idx.requests.length;
    t.diagnostic(`${how}: exit ${a.code}; index asked: ${idx.requests.join(', ')}`);
    // The allow run: nothing but the account's settings. This version exists on no public index.
    const r = await runMcpcell(['run', '--policy', trusting(`uvx://${PY_PROJECT}@${version}`), `uvx://${PY_PROJECT}@${version}`],
      { input: '', env: env(), guardMs: 30_000 });
    rmSync(entry, { recursive: true, force: true });
    if (asked > 0 && /WITHOUT a cell/.test(r.stderr)) ran.push(`${how}: the other index's wheel ran with no cell (exit ${r.code}):\n${r.stderr}`);
  }
  assert.deepEqual(ran, []);
});
