// Adversary pass adv15 (session 15): spellings of npm's and the CA
// environment's settings on an allow run of a trusted npx:// package
// (src/source/public_npm.cc WhyNpmConfigIsNotPublic, WhyCaEnvironmentIsNotPublic).
//
// HELD: every spelling below is refused before anything is installed —
// npm's own `config list -l` resolves case variants (NPM_CONFIG_*,
// npm_config_Strict_Ssl), userconfig/globalconfig files, and `ca`/`cafile`;
// registry URLs with userinfo or a backslash are read as npm reads them; the
// CA variables are judged by their canonical path. (What is NOT held is the
// time between this check and the install: adv15_config_toctou.test.mjs.)

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const ACCOUNT_HOME = os.userInfo().homedir;
const ROOT = makeTempDir('adv15-held');
const ID = `${process.pid}${Date.now() % 100000}`;
const NAME = `adv15-held-${ID}`;
const policy = path.join(ROOT, 'policy.json');
writeReadableFile(policy, JSON.stringify({ trusted_sources: [`npx://${NAME}@1.0.0`], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
const userconfig = path.join(ROOT, 'npmrc');
writeReadableFile(userconfig, 'strict-ssl=false\n');
const globalconfig = path.join(ROOT, 'global-npmrc');
writeReadableFile(globalconfig, 'registry=http://127.0.0.1:9/\n');
const aCa = '/usr/share/ca-certificates/mozilla/ACCVRAIZ1.crt';  // root's, under /usr, not the bundle

const cases = {
  'NPM_CONFIG_STRICT_SSL=false': { NPM_CONFIG_STRICT_SSL: 'false' },
  'npm_config_Strict_Ssl=false': { npm_config_Strict_Ssl: 'false' },
  'npm_config_cafile=<one root-owned CA file>': { npm_config_cafile: aCa },
  'npm_config_ca=<PEM>': { npm_config_ca: readFileSync(aCa, 'utf8').trim() },
  'NPM_CONFIG_USERCONFIG=<strict-ssl=false>': { NPM_CONFIG_USERCONFIG: userconfig },
  'npm_config_globalconfig=<registry=...>': { npm_config_globalconfig: globalconfig },
  'registry with userinfo of a host': { npm_config_registry: 'https://registry.npmjs.org@127.0.0.1:9/' },
  'registry with a backslash': { npm_config_registry: 'https://127.0.0.1:9\\@registry.npmjs.org/' },
  'registry with a trailing-dot host': { npm_config_registry: 'https://registry.npmjs.org./' },
  'SSL_CERT_DIR via ..': { SSL_CERT_DIR: '/etc/ssl/certs/../../../tmp' },
  'NODE_EXTRA_CA_CERTS via ..': { NODE_EXTRA_CA_CERTS: `/etc/ssl/certs/../../..${aCa}` },
  'SSL_CERT_FILE=<one CA>': { SSL_CERT_FILE: aCa },
};

test('adv15 held: spellings of npm\'s registry and TLS settings, and of the CA variables, refuse an allow run of a trusted npx:// package', {
  timeout: 180_000,
}, async (t) => {
  const accepted = [];
  for (const [what, extra] of Object.entries(cases)) {
    const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false', npm_config_fetch_retries: '0', ...extra };
    const r = await runMcpcell(['run', '--dry-run', '--policy', policy, `npx://${NAME}@1.0.0`], { input: '', env, guardMs: 30_000 });
    const refused = /is trusted by its name and version, but/.test(r.stderr);
    t.diagnostic(`${what}: ${refused ? 'refused' : `ACCEPTED (exit ${r.code})`} ${r.stderr.split('\n').find((l) => /but|error/.test(l)) ?? ''}`);
    if (!refused) accepted.push(`${what}: exit ${r.code}\n${r.stderr}`);
  }
  assert.deepEqual(accepted, []);
});
