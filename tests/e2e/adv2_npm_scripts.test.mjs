// Adversary pass (adv2) on the npm install-script cells (issue 14 item 2):
// a script that leaves a detached process behind (setsid, no stdio, so the
// host's EOF on the cell's output does not wait for it) to change its own
// package, another package or the host after its cell is over — after the
// host's checks, while the install is published, on the next run. The cell
// must take every process with it: nothing of the script runs once
// `mcpcell install` has returned, and nothing is written afterwards.
// Run as root and as mcpcell-test.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';

import { pidsWithArg } from './lib/host.mjs';
import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const DAEMON = `e2e-adv2-daemon-${id}`;
const PLAIN = `e2e-adv2-plain-${id}`;
const SERVER = `e2e-adv2-server-${id}`;
const MARK = `adv2late${id}`;

// The install script: a detached child (its own session, stdio ignored)
// that waits for the host to be done with the install, then writes.
const SCRIPT = `const { spawn } = require('child_process'); const fs = require('fs'); const path = require('path');
const own = __dirname, plain = path.resolve(__dirname, '..', '${PLAIN}');
const child = spawn('/bin/sh', ['-c', 'trap "" HUP TERM; for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.5; echo $i > "$0/late-${MARK}"; echo $i > "$1/late-${MARK}"; done', own, plain, '${MARK}'],
  { detached: true, stdio: 'ignore' });
child.unref();
fs.writeFileSync(path.join(own, 'started-${MARK}'), String(child.pid));
`;

let registry;
let home;
let env;
const cacheDir = () => path.join(home, '.cache', 'mcpcell', 'npx', `${SERVER}@1.0.0`);

before(async () => {
  home = mkdtempSync('/var/tmp/e2e-adv2-home-');
  chmodSync(home, 0o777);
  registry = await startPackageRegistry([
    { name: DAEMON, version: '1.0.0', manifest: { scripts: { install: 'node daemon.js' } }, files: { 'daemon.js': SCRIPT } },
    { name: PLAIN, version: '1.0.0', manifest: { main: 'index.js' }, files: { 'index.js': 'module.exports = 1;\n' } },
    {
      name: SERVER, version: '1.0.0',
      manifest: { bin: { [SERVER]: 'server.js' }, dependencies: { [DAEMON]: '1.0.0', [PLAIN]: '1.0.0' } },
      files: { 'server.js': '#!/usr/bin/env node\n' },
    },
  ]);
  writeReadableFile(path.join(home, '.npmrc'), `registry=${registry.url}\nfetch-retries=0\n`);
  env = scriptsEnv(home);
});
after(async () => {
  await registry?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  removeTempDirs();
});

test('an install script\'s detached process does not outlive its cell: nothing of it runs or writes after the install', { timeout: 240_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runMcpcell(['install', `npx://${SERVER}@1.0.0`], { env, guardMs: 200_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`running the install scripts of ${DAEMON} \\(install\\)`));
  const nm = path.join(cacheDir(), 'node_modules');
  assert.ok(existsSync(path.join(nm, DAEMON, `started-${MARK}`)), `the script ran and started its child:\n${r.stderr}`);
  assert.deepEqual(pidsWithArg(MARK), [], 'a process of the script outlived its cell');
  const ownLate = path.join(nm, DAEMON, `late-${MARK}`);
  const atReturn = existsSync(ownLate) ? readFileSync(ownLate, 'utf8') : null;
  // The child would have written every 0.5 s for 5 s: watch as long.
  for (let i = 0; i < 12; i++) {
    await sleep(500);
    assert.deepEqual(pidsWithArg(MARK), [], 'a process of the script outlived its cell');
  }
  assert.ok(!readdirSync(path.join(nm, PLAIN)).includes(`late-${MARK}`), 'another package was written after its cell');
  assert.equal(existsSync(ownLate) ? readFileSync(ownLate, 'utf8') : null, atReturn,
    'its own package was written after the install returned');
});

test('a directory a tarball bundles under an escape-laden name: its install-scripts line shows the name, the terminal does not obey it', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv2-bundle-${id}`;
  const evil = `b${id}\x1b[2J\x1b]0;owned\x07`;
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, bundleDependencies: [evil], dependencies: { [evil]: '1.0.0' } },
    files: {
      'server.js': '#!/usr/bin/env node\n',
      [`node_modules/${evil}/package.json`]: JSON.stringify({ name: evil, version: '1.0.0', scripts: { install: 'true' } }),
    },
  }]);
  t.after(() => reg.close());
  const r = await runMcpcell(['install', `npx://${top}@1.0.0`], { env: { ...env, npm_config_registry: reg.url }, guardMs: 150_000 });
  assert.equal(r.code, 0, r.stderr);
  // npm installed the bundled directory under that name, and its script ran in its bundler's cell.
  assert.match(r.stderr, new RegExp(`running the install scripts of the packages e2e-adv2-bundle-${id} bundles: b${id}\\^\\[\\[2J\\^\\[\\]0;owned\\^G \\(install\\)`), JSON.stringify(r.stderr));
  assert.ok(!r.stderr.includes('\x1b'), `an ESC of the directory's name reached stderr raw: ${JSON.stringify(r.stderr)}`);
  assert.ok(!r.stderr.includes('\x07'), `a BEL of the directory's name reached stderr raw: ${JSON.stringify(r.stderr)}`);
});

// A dependency the tarball bundles (bundleDependencies, in the package's
// own node_modules). adv2 found: it got a cell of its own where `npm rebuild
// <its dir>` ran nothing (npm selects no bundled package), then its
// bundler's rebuild ran the bundled script in the bundler's cell, where the
// bundled package's own directory was read-only (a bundled native addon could
// not build) — and mcpcell said it ran in a cell of its own. Fixed: the
// bundled scripts run in the bundler's cell, as npm runs them, named in its
// message; they may write their own directory and the bundler's (the same
// tarball: its author wrote both), not another package's or the install's.
test('a bundled dependency\'s install script runs once, in its bundler\'s cell, where it can write its own directory and no other package\'s', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const parent = `e2e-adv2-parent-${id}`;
  const nested = `e2e-adv2-nested-${id}`;
  const top = `e2e-adv2-top-${id}`;
  // Never fails: it records where it could write and goes on.
  const script = `const fs = require('fs'), p = require('path');
const up = p.resolve(__dirname, '..', '..');
const attempt = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };
const parentWrite = attempt(() => fs.writeFileSync(p.join(up, 'nested-wrote-parent-${MARK}'), 'x'));
const topWrite = attempt(() => fs.writeFileSync(p.join(up, '..', '${top}', 'nested-wrote-top-${MARK}'), 'x'));
const installWrite = attempt(() => fs.writeFileSync(p.join(up, '..', '..', 'nested-wrote-install-${MARK}'), 'x'));
attempt(() => fs.appendFileSync(p.join(__dirname, 'runs-${MARK}'), [parentWrite, topWrite, installWrite].join(' ') + '\\n'));
`;
  const reg = await startPackageRegistry([
    {
      name: parent, version: '1.0.0',
      manifest: { scripts: { install: 'node -e "1"' }, bundleDependencies: [nested], dependencies: { [nested]: '1.0.0' } },
      files: {
        [`node_modules/${nested}/package.json`]: JSON.stringify({ name: nested, version: '1.0.0', scripts: { install: 'node n.js' } }),
        [`node_modules/${nested}/n.js`]: script,
      },
    },
    { name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' }, dependencies: { [parent]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const r = await runMcpcell(['install', `npx://${top}@1.0.0`], { env: { ...env, npm_config_registry: reg.url }, guardMs: 150_000 });
  assert.equal(r.code, 0, r.stderr);
  const installDir = path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`);
  const parentDir = path.join(installDir, 'node_modules', parent);
  const runsFile = path.join(parentDir, 'node_modules', nested, `runs-${MARK}`);
  assert.ok(existsSync(runsFile), `the bundled script never wrote its own directory (it ran where that is read-only):\n${r.stderr}`);
  // Once; its bundler's directory writable, the top package's and the install's not.
  assert.equal(readFileSync(runsFile, 'utf8'), 'ok EROFS EROFS\n', r.stderr);
  assert.ok(!existsSync(path.join(installDir, 'node_modules', top, `nested-wrote-top-${MARK}`)));
  assert.ok(!existsSync(path.join(installDir, `nested-wrote-install-${MARK}`)));
  // Said as it is: one cell, the bundler's, naming what it bundles.
  assert.match(r.stderr, new RegExp(`running the install scripts of ${parent} \\(install\\) and of the packages it bundles: ${nested} \\(install\\)`), r.stderr);
  assert.doesNotMatch(r.stderr, new RegExp(`running the install scripts of ${nested}`), r.stderr);
});
