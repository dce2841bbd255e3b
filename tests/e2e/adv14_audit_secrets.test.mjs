// Adversary pass adv14 (session 14): the audit log's argv masking
// (src/cli/audit_events.cc: an argv word holding a secret by the built-in
// rules is written masked in the launch record). Do other records carry the
// same word: the decision's `source`/`trust_facts`, for npx:// and command
// servers with the token among the server's arguments?

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { newGithubToken } from './lib/github_token.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { startPackageRegistry } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const ID = `${process.pid}${Date.now() % 100000}`;

/** Every string field of the log holding `needle`, as "event path". */
function holders(log, needle) {
  const out = [];
  const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
  for (const line of text.split('\n').filter(Boolean)) {
    const j = JSON.parse(line);
    const walk = (o, at) => {
      if (typeof o === 'string') { if (o.includes(needle)) out.push(`${j.event} ${at}`); return; }
      if (o && typeof o === 'object') for (const [k, v] of Object.entries(o)) walk(v, `${at}.${k}`);
    };
    walk(j, '');
  }
  return { out, lines: text.split('\n').filter(Boolean).length };
}

test('adv14 held: a GitHub token among an npx:// server\'s or a command\'s arguments is in no audit record (decision, launch, exit)', {
  timeout: 90_000,
}, async (t) => {
  const name = `adv14-audit-${ID}`;
  const reg = await startPackageRegistry([{ name, version: '1.0.0', manifest: { bin: { srv: 'index.js' } }, files: { 'index.js': '#!/usr/bin/env node\n' }, exec: ['index.js'] }]);
  t.after(() => reg.close());
  const home = makeTempDir('adv14-audit-home');
  const policy = path.join(home, 'policy.json');
  writeReadableFile(policy, JSON.stringify({ rules: [], default: 'isolate' }));
  const script = path.join(home, 'srv.py');
  writeReadableFile(script, 'import sys\n');
  const env = { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_registry: reg.url, npm_config_update_notifier: 'false' };
  const leaks = [];
  for (const [label, server] of [['npx', [`npx://${name}@1.0.0`, '--']], ['command', ['--', '/usr/bin/python3', script]]]) {
    for (const form of ['split', 'joined']) {
      const token = newGithubToken();
      const args = form === 'split' ? ['--github-token', token] : [`--github-token=${token}`];
      const log = path.join(home, `${label}-${form}.jsonl`);
      const r = await runMcpcell(['run', ...(label === 'npx' ? ['--install-scripts=skip'] : []), '--audit-log', log, '--policy', policy, ...server, ...args], { input: '', env, guardMs: 55_000 });
      const h = holders(log, token.slice(4, 24));
      t.diagnostic(`${label} ${form}: exit ${r.code}, ${h.lines} records`);
      assert.ok(h.lines > 0, `${label} ${form}: no audit record:\n${r.stderr}`);
      if (h.out.length) leaks.push(`${label} ${form}: ${h.out.join(', ')}`);
    }
  }
  assert.deepEqual(leaks, []);
});
