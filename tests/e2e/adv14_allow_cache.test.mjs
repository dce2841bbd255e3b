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
//   high   npx://: WhyInstallIsNotPublic reads package-lock.json's `resolved`,
//          which npm copies from the registry's own package document: a
//          registry whose dist.tarball says https://registry.npmjs.org/...
//          is fetched from anyway (npm's replace-registry-host, default
//          "npmjs", swaps that host for the configured registry), and its
//          package passes the check on a later clean allow run.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';

import { RUN_ID, accountEnv as env, cacheEntry, removeCacheEntries } from './lib/account_cache.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { lyingRegistry } from './lib/mitm.mjs';
import { policyRunner } from './lib/policy_run.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);
after(removeCacheEntries);

const ROOT = makeTempDir('adv14-cache');
const ID = RUN_ID;
const { trusting } = policyRunner({ root: ROOT });

test('adv14: uvx:// cache filled by `mcpcell install` (or an isolated run) with PIP_INDEX_URL runs on a later clean allow run with no cell (the after-install check is npx:// only)', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  for (const [i, how] of ['install', 'run --isolate'].entries()) {
    const version = `14.${ID}.${i}`;
    const idx = await startIndex([version]);
    t.after(() => idx.close());
    const entry = cacheEntry('uvx', PY_PROJECT, version);
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

/**
 * A registry that lies about where its tarball lives: the package document's
 * dist.tarball is https://registry.npmjs.org/NAME/-/NAME-1.0.0.tgz. npm's
 * replace-registry-host (default "npmjs") fetches it from the configured
 * registry (this one), and writes the lie into package-lock.json's `resolved`.
 */
test('adv14: package-lock.json `resolved` is what the registry\'s document says: a registry whose dist.tarball names registry.npmjs.org fills the cache (npm fetches it from that registry), and a later clean allow run runs it with no cell', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  for (const how of ['install', 'run --isolate']) {
    const name = `adv14-lockspoof-${how.replace(/\W/g, '')}-${ID}`;
    const entry = cacheEntry('npx', name);
    const reg = await lyingRegistry(t, 'adv14-lying', name, `ADV14-LOCKSPOOF-RAN-${how}`);
    const first = how === 'install' ? ['install', '--install-scripts=skip', `npx://${name}@1.0.0`]
      : ['run', '--isolate', '--install-scripts=skip', `npx://${name}@1.0.0`];
    const a = await runMcpcell(first, { input: '', env: env({ npm_config_registry: reg.url, npm_config_update_notifier: 'false' }), guardMs: 55_000 });
    t.diagnostic(`${how}: exit ${a.code}; registry asked: ${reg.requests.join(', ')}`);
    const r = await runMcpcell(['run', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`], { input: '', env: env(), guardMs: 30_000 });
    rmSync(entry, { recursive: true, force: true });
    if (/WITHOUT a cell/.test(r.stderr) && /ADV14-LOCKSPOOF-RAN/.test(r.stderr)) ran.push(`${how}: the lying registry's package ran with no cell:\n${r.stderr}`);
  }
  assert.deepEqual(ran, []);
});
