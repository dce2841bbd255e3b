// Issue 14 item 1: the npm that installs npx:// servers uses the user's and
// the machine's own npm config. `npm install --prefix DIR` alone makes npm
// read its global config from DIR/etc/npmrc (npm derives globalconfig from
// the prefix), so a machine's global npmrc — registry, proxy, cafile — was
// dropped and the first launch failed. Here the "machine's" global npmrc is
// the one under NPM_CONFIG_PREFIX (how npm finds it without touching this
// host's real /usr/etc/npmrc), and it is the only place that names this
// test's registry on 127.0.0.1: an install that ignores it asks the default
// registry for a package that exists nowhere else, and fails.
// Also: `mcpcell install` fetches ahead of time (the run after it installs
// nothing), shows npm's progress on stderr, and a killed `mcpcell install`
// leaves no npm running.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { pollUntilClean } from './lib/host.mjs';
import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { startRegistry } from './lib/npm_registry.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const packageName = () => `e2e-npmrc-${randomBytes(4).toString('hex')}`;

/** An environment whose only mention of `registry` is the global npmrc under a prefix of its own. */
function globalNpmrcEnv(registry, label) {
  const home = makeWritableDir(`${label}-home`);
  const prefix = path.join(home, 'npm-global');
  mkdirSync(path.join(prefix, 'etc'), { recursive: true });
  writeReadableFile(path.join(prefix, 'etc', 'npmrc'), `registry=${registry.url}\nfetch-retries=0\n`);
  return {
    home,
    env: {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      LANG: 'C.UTF-8',
      XDG_CACHE_HOME: path.join(home, '.cache'),
      npm_config_prefix: prefix,
      npm_config_cache: path.join(home, 'npm-cache'),
      npm_config_update_notifier: 'false',
    },
  };
}

test('mcpcell install honours the global npmrc (registry) and shows npm\'s progress; the next run installs nothing', { timeout: 180_000 }, async (t) => {
  const registry = await startRegistry(packageName(), '1.0.0', 'serve');
  t.after(() => registry.close());
  const { env } = globalNpmrcEnv(registry, 'npmrc');
  const source = `npx://${registry.name}@1.0.0`;

  const r = await runMcpcell(['install', source], { env, guardMs: 120_000 });
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  assert.ok(registry.requests.some((q) => q.endsWith('.tgz')), `the global npmrc's registry served the tarball; it saw: ${registry.requests.join(', ')}`);
  assert.match(r.stderr, /http fetch GET 200 .*\.tgz/, 'npm\'s progress (one line per fetch) is on stderr');
  assert.match(r.stderr, new RegExp(`${registry.name}@1\\.0\\.0 installed in `));
  assert.equal(r.stdout, '', 'stdout stays empty');

  const again = await runMcpcell(['install', source], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /already installed/);

  if (await skipWithoutCell(t)) return;
  const before = registry.requests.length;
  const run = await runMcpcell(['run', source], { env, input: 'hello\n', guardMs: 120_000 });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'hello\n');
  assert.doesNotMatch(run.stderr, /installing/, 'the first launch after install fetches nothing');
  assert.equal(registry.requests.length, before, 'no registry request at launch');
});

test('mcpcell run installs through the global npmrc too (the first launch from a client)', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const registry = await startRegistry(packageName(), '1.0.0', 'serve');
  t.after(() => registry.close());
  const { env } = globalNpmrcEnv(registry, 'npmrc-run');
  const run = await runMcpcell(['run', `npx://${registry.name}@1.0.0`], { env, input: 'from the client\n', guardMs: 120_000 });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'from the client\n');
});

/** Pids of processes whose environment holds `entry` ("NAME=value"): npm inherits mcpcell's. */
function pidsWithEnv(entry) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(entry)) found.push(Number(name));
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

test('kill -9 of mcpcell install while npm fetches: no npm left running', { timeout: 120_000 }, async (t) => {
  const registry = await startRegistry(packageName(), '1.0.0', 'holdTarball');
  t.after(() => registry.close());
  const { env, home } = globalNpmrcEnv(registry, 'npmrc-kill');
  const mark = `HOME=${home}`;
  t.after(() => pidsWithEnv(mark).forEach((p) => { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }));
  const child = spawn(MCPCELL_BIN, ['install', `npx://${registry.name}@1.0.0`], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let guard;
  await Promise.race([registry.tarballRequested,
    new Promise((_, reject) => (guard = setTimeout(() => reject(new Error(`npm never fetched; stderr:\n${stderr}`)), 90_000)))]);
  clearTimeout(guard);
  assert.ok(pidsWithEnv(mark).filter((p) => p !== child.pid).length > 0, 'npm is running (the phase under test)');
  child.kill('SIGKILL');
  assert.deepEqual(await exited, { code: null, signal: 'SIGKILL' });
  const running = await pollUntilClean(() => {
    const left = pidsWithEnv(mark);
    return left.length ? `still running: ${left.join(' ')}` : null;
  });
  assert.equal(running, null, running);
});
