// Adversary pass adv18: npm's output masks after the adv16 fixes
// (util/masked_echo.cc, source/npmrc_snapshot.cc UrlTokenPieces,
// source/npx_install.cc Snapshot/Config).
//
// Held (these tests pass; they fail if npm's warnings or the masks change):
//   npm expands ${VAR} in npmrc keys and values (@npmcli/config index.js
//   `envReplace(key, this.env)`), the documented way to keep a token out of
//   the file (`//npm.fury.io/${FURY_TOKEN}/acme/:...`), while the masks of
//   the copies (NpmrcSnapshot::UrlTokenPieces) are taken from the file's
//   text, so they hold the literal "${FURY_TOKEN}", never the token. But
//   npm 11's "Unknown user config" warning names the key as written, before
//   expansion, and the expanded registry URL is masked (RegistryTokenPieces
//   of `npm config list -l`) before any run that fetches: no line carries
//   the token. (Fragile: masks from the expanded config of every `//...:`
//   key, not only registries, would not depend on how npm words a warning.)

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';

/** A Gemfury-shaped token: 22 letters and digits, mixed. */
function pathToken() {
  const b62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `Fq8${[...randomBytes(19)].map((b) => b62[b % 62]).join('')}`;
}

async function installWith(npmrcText, home, extraEnv = {}) {
  writeReadableFile(path.join(home, '.npmrc'), npmrcText);
  return runMcpcell(['install', '--install-scripts=skip', 'npx://adv18-regtok@1.0.0'], {
    input: '',
    env: { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
      npm_config_fetch_retries: '0', npm_config_update_notifier: 'false', ...extraEnv },
    guardMs: 50_000,
  });
}

function linesWith(stderr, token) {
  return stderr.split('\n').filter((l) => l.includes(token));
}

test('adv18 held: a keyed //HOST/${TOKEN}/path/:key (npm expands the variable) does not print the token', {
  timeout: 60_000,
}, async (t) => {
  const home = makeTempDir('adv18-mask-envkey');
  const token = pathToken();
  const r = await installWith('registry=http://127.0.0.1:9/acme/\n//127.0.0.1:9/${ADV18_TOK}/other/:always-auth=true\n',
    home, { ADV18_TOK: token });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  assert.match(r.stderr, /Unknown user config "always-auth"/, 'npm did not warn (the case under test)');
  const lines = linesWith(r.stderr, token);
  assert.deepEqual(lines, [], `the token was printed ${lines.length} times`);
});

test('adv18 held: a registry written https://HOST/${TOKEN}/ does not print the token in the config listing\'s warnings', {
  timeout: 60_000,
}, async (t) => {
  const home = makeTempDir('adv18-mask-envreg');
  const token = pathToken();
  const r = await installWith('registry=http://127.0.0.1:9/${ADV18_TOK}/acme/\n//127.0.0.1:9/${ADV18_TOK}/acme/:always-auth=true\n',
    home, { ADV18_TOK: token });
  t.diagnostic(`exit ${r.code}\n${r.stderr}`);
  const lines = linesWith(r.stderr, token);
  assert.deepEqual(lines, [], `the token was printed ${lines.length} times`);
});
