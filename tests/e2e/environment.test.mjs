// What a program sees inside a native cell: a cleared environment, its own
// uid and HOME, a read-only root, a private /tmp, no host files it was not
// given, and no network but loopback.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';

import { lines, runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const BASE_ENV = ['HOME', 'LANG', 'PATH', 'TMPDIR'];
const SECRET = 'e2e-secret-token-d0-not-leak';
const printEnv = [NODE_BIN, '-e', 'process.stdout.write(JSON.stringify(process.env))'];

async function envInCell(cellArgs) {
  const r = await runInCell(cellArgs, printEnv, { env: { ...process.env, SECRET_TOKEN: SECRET } });
  assert.equal(r.code, 0, `mcpcell exit ${r.code}; stderr:\n${r.stderr}`);
  assert.ok(!r.stdout.includes(SECRET), 'the host secret leaked into the cell');
  return JSON.parse(r.stdout);
}

test('environment: cleared to the minimal set; no host variable leaks', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const env = await envInCell([]);
  const extra = Object.keys(env).filter((k) => !BASE_ENV.includes(k));
  assert.deepEqual(extra, [], `unexpected variables in the cell: ${extra.join(', ')}`);
  assert.ok(env.PATH, 'PATH missing');
  assert.equal(env.HOME, '/home/mcp');
});

test('environment: --env NAME=VALUE adds exactly that variable', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const env = await envInCell(['--env', 'FOO=bar']);
  assert.equal(env.FOO, 'bar');
  const extra = Object.keys(env).filter((k) => !BASE_ENV.includes(k) && k !== 'FOO');
  assert.deepEqual(extra, []);
});

test('environment: --env NAME copies one host variable on request', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runInCell(['--env', 'SECRET_TOKEN'], printEnv, { env: { ...process.env, SECRET_TOKEN: SECRET } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).SECRET_TOKEN, SECRET);
});

// Runs inside the cell; prints one JSON object describing what it sees.
const probeScript = `
const fs = require('fs'), os = require('os');
const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'ok'; } catch (e) { return e.code; } };
const tryRead = (p) => { try { fs.readFileSync(p); return 'ok'; } catch (e) { return e.code; } };
console.log(JSON.stringify({
  uid: process.getuid(), gid: process.getgid(), home: os.homedir(),
  root: tryWrite('/e2e-probe'), usr: tryWrite('/usr/e2e-probe'),
  tmp: tryWrite('/tmp/e2e-probe'), homeDir: tryWrite(os.homedir() + '/e2e-probe'),
  outside: tryRead(process.argv[1]),
  interfaces: Object.keys(os.networkInterfaces()),
}));`;

test('cell shape: uid 1000, writable HOME and /tmp, read-only root, no foreign host files, loopback only', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const hidden = makeTempDir('hidden');
  const hiddenFile = path.join(hidden, 'host-only.txt');
  writeReadableFile(hiddenFile, 'host only');
  const r = await runInCell([], [NODE_BIN, '-e', probeScript, hiddenFile]);
  assert.equal(r.code, 0, `mcpcell exit ${r.code}; stderr:\n${r.stderr}`);
  assert.equal(lines(r.stdout).length, 1, `stdout: ${r.stdout}`);
  const seen = JSON.parse(r.stdout);
  assert.equal(seen.uid, 1000);
  assert.equal(seen.gid, 1000);
  assert.equal(seen.home, '/home/mcp');
  assert.equal(seen.tmp, 'ok');
  assert.equal(seen.homeDir, 'ok');
  assert.match(seen.root, /^(EROFS|EACCES|EPERM)$/, `writing / gave ${seen.root}`);
  assert.match(seen.usr, /^(EROFS|EACCES|EPERM)$/, `writing /usr gave ${seen.usr}`);
  assert.equal(seen.outside, 'ENOENT', 'a host temp dir not named by --read is visible in the cell');
  // os.networkInterfaces() lists only interfaces with an address; lo is up in the cell.
  assert.deepEqual(seen.interfaces.filter((i) => i !== 'lo'), [], `network interfaces: ${seen.interfaces}`);
});
