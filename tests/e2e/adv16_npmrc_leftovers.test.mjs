// Adversary pass adv16: the per-launch npmrc copies and npm cache
// (src/source/npmrc_snapshot.{h,cc}) and the '_' scope's project .npmrc
// (npx_install.cc ProjectConfigFile) when mcpcell is killed mid-install — an
// MCP client that gives up on a slow server start does exactly that.
//
// Findings:
//   LOW    `<npx cache>/.npmrc-PID-XXXXXX/` (copies of the user's and the
//          global npmrc, tokens and all, and the launch's whole npm cache) is
//          removed only by the NpmrcSnapshot destructor: a SIGKILLed mcpcell
//          leaves it forever. RemoveAbandonedInstalls sweeps `.install-*`
//          only, so later launches never remove it: the tokens outlive their
//          removal from ~/.npmrc (rotated, revoked locally) in a cache that
//          `mcpcell cache prune` does not list, and every killed install
//          leaves a full npm cache behind.
//          Suggested fix: sweep `.npmrc-<dead pid>-*` (and older than an
//          hour) with the `.install-*` ones.
//   held   the project .npmrc in `.install-PID-*` of a killed install is
//          removed by the next launch (RemoveAbandonedInstalls); copies are
//          0600 in a 0700 directory.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { startRegistry } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('adv16: a killed install leaves its npmrc copies (tokens) and npm cache, and no later launch removes them', {
  timeout: 90_000,
}, async (t) => {
  const reg = await startRegistry('adv16-leftover', '1.0.0', 'silent');
  t.after(() => reg.close());
  const home = makeTempDir('adv16-leftover');
  const secret = `npm_${'Z'.repeat(8)}adv16${process.pid}SECRET`;
  const port = new URL(reg.url).port;
  writeReadableFile(path.join(home, '.npmrc'), `registry=${reg.url}\n//127.0.0.1:${port}/:_authToken=${secret}\n@my_corp:registry=http://127.0.0.1:8/\n`);
  const env = { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
    npm_config_fetch_retries: '0', npm_config_update_notifier: 'false' };
  const npxRoot = path.join(home, '.cache', 'mcpcell', 'npx');

  const child = spawn(MCPCELL_BIN, ['install', '--install-scripts=skip', 'npx://adv16-leftover@1.0.0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.on('exit', r));
  // Wait for npm install to ask the (silent) registry: the copies are taken by then.
  for (let i = 0; i < 200 && reg.requests.length === 0; i++) await sleep(100);
  const snapshots = () => (existsSync(npxRoot) ? readdirSync(npxRoot).filter((n) => n.startsWith(`.npmrc-${child.pid}-`)) : []);
  const installs = () => (existsSync(npxRoot) ? readdirSync(npxRoot).filter((n) => n.startsWith(`.install-${child.pid}-`)) : []);
  t.diagnostic(`registry asked: ${reg.requests.join(', ')}; snapshots ${snapshots().join(',')}; installs ${installs().join(',')}`);
  const hadProjectNpmrc = installs().some((n) => existsSync(path.join(npxRoot, n, '.npmrc')));
  child.kill('SIGKILL');
  await exited;
  assert.ok(reg.requests.length > 0, `npm never asked the registry (test setup):\n${stderr}`);
  assert.ok(hadProjectNpmrc, 'the @my_corp scope got no project .npmrc (test setup)');

  // A later launch (its registry refuses at once).
  writeReadableFile(path.join(home, '.npmrc'), 'registry=http://127.0.0.1:9/\n');
  const r = await runMcpcell(['install', '--install-scripts=skip', 'npx://adv16-leftover2@1.0.0'], { input: '', env, guardMs: 40_000 });
  t.diagnostic(`later launch exit ${r.code}`);
  // Held: the killed install's prefix (with its project .npmrc) is swept.
  assert.deepEqual(installs(), [], 'the killed install\'s prefix (project .npmrc) was left');
  const left = snapshots();
  const withSecret = left.filter((n) => {
    const user = path.join(npxRoot, n, 'user');
    return existsSync(user) && readFileSync(user, 'utf8').includes(secret);
  });
  for (const n of left) t.diagnostic(`${n}: mode ${(statSync(path.join(npxRoot, n)).mode & 0o777).toString(8)}`);
  assert.deepEqual(withSecret, [], `the killed launch's npmrc copy (with the token) is still there: ${left.join(', ')}`);
});
