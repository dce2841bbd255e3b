// Adversary pass adv14 (session 14): version wildcards in trusted_sources
// (src/policy/condition.cc IsTrusted: a version glob trusts exact versions
// only, IsExactVersion in src/source/server_ref.cc). Specs that look exact to
// mcpcell's regex but could be ranges or other versions to npm.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { RUN_ID } from './lib/account_cache.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { startPackageRegistry } from './lib/npm_registry.mjs';
import { policyRunner } from './lib/policy_run.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const ID = RUN_ID;

test('adv14 held: a glob npx://PKG@1.0.* allows no spec that npm resolves outside 1.0.* (v-prefix, build metadata, =, x-ranges, hyphen and || ranges)', {
  timeout: 90_000,
}, async (t) => {
  const name = `adv14-vglob-${ID}`;
  const reg = await startPackageRegistry([{ name, version: '9.0.0', manifest: { bin: { srv: 'index.js' } }, files: { 'index.js': '' } }]);
  t.after(() => reg.close());
  const home = makeTempDir('adv14-vglob');
  const policy = policyRunner({ root: home }).trusting(`npx://${name}@1.0.*`);
  const bad = [];
  for (const spec of ['v9.0.0', '1.0.0+9.0.0', '=9.0.0', '1.0.x || 9', '1.0.0 - 9.0.0', '1.0.0||9.0.0', '1.0.*||9', '1.0.0-0 - 9', '>1.0.0', '1.0.0|9.0.0', '1.0']) {
    const r = await runMcpcell(['policy', 'explain', '--json', '--isolate', '--policy', policy, `npx://${name}@${spec}`], {
      input: '', env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_registry: reg.url },
      guardMs: 30_000,
    });
    let j = null;
    try { j = JSON.parse(r.stdout); } catch { /* refused: nothing allowed */ }
    t.diagnostic(`${spec}: exit ${r.code}, policy ${j?.decision?.action}, npm resolves ${j?.install?.version}`);
    if (j?.decision?.action === 'allow' && j?.install?.version && !j.install.version.startsWith('1.0.')) bad.push(`${spec} -> ${j.install.version}`);
  }
  assert.deepEqual(bad, []);
});
