// Adversary pass adv14 (session 14): a registry that takes its token in the
// URL path (Gemfury https://npm.fury.io/TOKEN/user/, Artifactory
// .../api/npm/KEY/). adv12's fix turns npm's request log off for such a
// registry (npx_install.cc: "npm's request log is off"); the token still
// reaches the client's stderr another way:
//
// Findings:
//   medium npm's own error for a failed fetch ("npm error FetchError: request
//          to http://HOST/TOKEN/user/PKG failed") prints the URL whole, and
//          mcpcell passes npm's stderr through.
//   medium a scope with '_' in its name is redirected by a flag
//          (install_scopes.cc Flags: --@my_corp:registry=OWN), OWN being the
//          package's registry URL, token and all: on npm's command line
//          (/proc/PID/cmdline, readable by every local user) and in
//          mcpcell's "could not install ... (run npm install ...)" message.

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

test('adv14: a registry token in the URL path reaches the client\'s stderr: npm\'s FetchError names the URL, and a \'_\' scope\'s --@scope:registry flag holds it in mcpcell\'s message', {
  timeout: 60_000,
}, async (t) => {
  const home = makeTempDir('adv14-regtok');
  const seen = [];
  for (const scoped of [false, true]) {
    const token = pathToken();
    const rc = path.join(home, `${scoped}.npmrc`);
    // Port 9 on loopback: nothing listens, the fetch fails at once.
    writeReadableFile(rc, `registry=http://127.0.0.1:9/${token}/acme/\n${scoped ? '@my_corp:registry=http://127.0.0.1:8/\n' : ''}`);
    const r = await runMcpcell(['run', '--isolate', '--install-scripts=skip', 'npx://adv14-regtok@1.0.0'], {
      input: '',
      env: { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_userconfig: rc,
        npm_config_fetch_retries: '0', npm_config_update_notifier: 'false' },
      guardMs: 50_000,
    });
    t.diagnostic(`scoped=${scoped}: exit ${r.code}`);
    const lines = r.stderr.split('\n').filter((l) => l.includes(token)).map((l) => l.slice(Math.max(0, l.indexOf(token) - 100), l.indexOf(token) + 40));
    if (lines.length) seen.push(`${scoped ? 'with a @my_corp scope' : 'no scope'}:\n  ${lines.join('\n  ')}`);
  }
  assert.deepEqual(seen, [], 'the registry token was printed');
});
