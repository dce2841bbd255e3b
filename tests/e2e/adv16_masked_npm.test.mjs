// Adversary pass adv16: npm's output with a registry whose URL holds a token
// in its path (util/masked_echo.h, npx_install.cc RegistryTokenPieces,
// url_credential.cc TokenPieces).
//
// Findings:
//   MEDIUM the masks are known only after `npm config list -l` (Config()):
//          the first three npm runs of an install of a pinned version —
//          `npm config get globalconfig userconfig` (ConfigPaths), `npm config
//          get allow-remote` (CheckNpmRefusesNonRegistrySources runs before
//          Install's Config()) and `npm config list -l` itself — write their
//          stderr straight to mcpcell's. npm 11 warns on every run about a config
//          key it does not know, naming the key whole: a per-registry key
//          such as `//npm.fury.io/TOKEN/acme/:always-auth=true` (the
//          Gemfury/Artifactory setup docs of npm <= 8 wrote it; npm 9 dropped
//          always-auth) prints `npm warn Unknown user config "always-auth"
//          (//npm.fury.io/TOKEN/acme/:always-auth)` — the token, on every
//          install, three times unmasked. (Later runs mask it: the same token is
//          the registry's.)
//          Suggested fix: take the masks from the copies before any npm run
//          (read the npmrc text: every token-shaped piece of every `//host/`
//          key and every *registry value), or run the first two npm calls
//          with stderr captured and echoed after the masks are known.
//   held   npm's 404 / FetchError after the masks are known (adv14's
//          test), a token percent-encoded in the config.

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
  const rc = path.join(home, '.npmrc');
  writeReadableFile(rc, npmrcText);
  return runMcpcell(['install', '--install-scripts=skip', 'npx://adv16-regtok@1.0.0'], {
    input: '',
    env: { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
      npm_config_fetch_retries: '0', npm_config_update_notifier: 'false', ...extraEnv },
    guardMs: 50_000,
  });
}

function linesWith(stderr, token) {
  return stderr.split('\n').filter((l) => l.includes(token));
}

test('adv16: a per-registry key npm does not know (//HOST/TOKEN/acme/:always-auth) prints the path token before the masks are known', {
  timeout: 60_000,
}, async (t) => {
  const home = makeTempDir('adv16-mask-aa');
  const token = pathToken();
  // Port 9 on loopback: nothing listens, the fetch fails at once.
  const r = await installWith(`registry=http://127.0.0.1:9/${token}/acme/\n//127.0.0.1:9/${token}/acme/:always-auth=true\n`, home);
  t.diagnostic(`exit ${r.code}`);
  const lines = linesWith(r.stderr, token);
  assert.deepEqual(lines, [], `the registry token was printed ${lines.length} times`);
});

// Review of session 12: the masks taken from the npmrc copies (every URL
// they name) were replaced, not added to, by the registries' once npm had
// listed its config: a `//HOST/TOKEN/:key` of a URL that is no registry
// was printed whole by the install's own warning.
test('the path token of a keyed URL that is no registry stays masked after npm lists its config', { timeout: 60_000 }, async (t) => {
  const home = makeTempDir('adv16-mask-keyonly');
  const token = pathToken();
  const r = await installWith(`registry=http://127.0.0.1:9/acme/\n//127.0.0.1:9/${token}/other/:always-auth=true\n`, home);
  t.diagnostic(`exit ${r.code}`);
  assert.match(r.stderr, /Unknown user config "always-auth"/, `npm did not warn (the case under test):\n${r.stderr}`);
  const lines = linesWith(r.stderr, token);
  assert.deepEqual(lines, [], `the token was printed ${lines.length} times`);
});

test('adv16: after the masks are known the same warning is masked (guards the echo)', { timeout: 60_000 }, async (t) => {
  const home = makeTempDir('adv16-mask-later');
  const token = pathToken();
  const r = await installWith(`registry=http://127.0.0.1:9/${token}/acme/\n//127.0.0.1:9/${token}/acme/:always-auth=true\n`, home);
  t.diagnostic(`exit ${r.code}`);
  // npm still warns (the runs after the copies), and every warning went
  // through the mask (the one run before them is --loglevel=error).
  const warnings = r.stderr.split('\n').filter((l) => l.includes('Unknown user config "always-auth"'));
  assert.ok(warnings.length >= 1, `expected npm's warning:\n${r.stderr}`);
  for (const l of warnings) assert.ok(!l.includes(token), `a warning was not masked: ${l}`);
  assert.ok(warnings.every((l) => l.includes('[masked]')), `an unmasked warning:\n${r.stderr}`);
});

test('adv16: a token written percent-encoded in the registry URL is masked as npm prints it', { timeout: 60_000 }, async (t) => {
  const home = makeTempDir('adv16-mask-pct');
  const token = pathToken();
  const encoded = `%${token.charCodeAt(0).toString(16).toUpperCase()}${token.slice(1)}`;
  const r = await installWith(`registry=http://127.0.0.1:9/${encoded}/acme/\n`, home);
  t.diagnostic(`exit ${r.code}`);
  const lines = [...linesWith(r.stderr, token.slice(1)), ...linesWith(r.stderr, token)];
  assert.deepEqual(lines, [], 'the percent-encoded token was printed');
});
