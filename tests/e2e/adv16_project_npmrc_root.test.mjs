// Adversary pass adv16: the config sources npm reads besides the two copied
// files (src/source/npmrc_snapshot.h; npx_install.cc Config/Install).
//
// Finding:
//   MEDIUM (needs a /.npmrc) the allow check's `npm config list -l` runs in
//          kHostToolCwd "/" without --prefix, so npm reads "/.npmrc" as the
//          *project* config (over the user's); `npm install --prefix DIR`
//          reads DIR/.npmrc instead. A root-owned /.npmrc naming the public
//          registry (an image built with WORKDIR / and `npm config set
//          --location=project`, or an admin's `npm ... ` run from /) hides
//          the user config's registry from the check only: with
//          NPM_CONFIG_USERCONFIG (a client config's env block) naming a file
//          with `registry=ATTACKER`, the check sees the public registry, the
//          install fetches from the attacker's, the origin record says
//          public, and the attacker's package runs with NO cell on an allow
//          run of a trusted npx:// package.
//          Suggested fix: ask `npm config list -l` with the same --prefix
//          the install uses (the prefix made first), or give every npm run
//          `--prefix` of the install (an empty one for config/view), so
//          both read the same project config.

import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { lyingRegistry } from './lib/mitm.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ID = `${process.pid}${Date.now() % 100000}`;
const ROOT_NPMRC = '/.npmrc';

test('adv16: a root /.npmrc is the check\'s project config but not the install\'s: the user config\'s registry is hidden from the allow check', {
  timeout: 120_000,
  skip: existsSync(ROOT_NPMRC) || process.getuid() !== 0 ? 'needs root and no /.npmrc of the machine' : false,
}, async (t) => {
  const name = `adv16-rootnpmrc-${ID}`;
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  t.after(() => rmSync(entry, { recursive: true, force: true }));
  const reg = await lyingRegistry(t, 'adv16-lying', name, 'ADV16-ROOTNPMRC-RAN');
  writeReadableFile(ROOT_NPMRC, 'registry=https://registry.npmjs.org/\n');
  t.after(() => rmSync(ROOT_NPMRC, { force: true }));
  const dir = makeTempDir('adv16-rootnpmrc');
  const userconfig = path.join(dir, 'npmrc');
  writeReadableFile(userconfig, `registry=${reg.url}\n`);
  const policy = path.join(dir, 'policy.json');
  writeReadableFile(policy, JSON.stringify({ trusted_sources: [`npx://${name}@1.0.0`], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', policy, `npx://${name}@1.0.0`], {
    input: '',
    env: { PATH: BASE_PATH, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', NPM_CONFIG_USERCONFIG: userconfig,
      npm_config_update_notifier: 'false', npm_config_fetch_retries: '0' },
    guardMs: 90_000,
  });
  rmSync(ROOT_NPMRC, { force: true });
  t.diagnostic(`exit ${r.code}; registry asked: ${reg.requests.join(', ')}\n${r.stderr}`);
  assert.ok(!/ADV16-ROOTNPMRC-RAN/.test(r.stderr), `the attacker's package ran with no cell:\n${r.stderr}`);
});
