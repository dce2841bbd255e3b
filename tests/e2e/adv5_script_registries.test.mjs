// Adversary pass 5 on the install-script cells' registries (commit 474ac74,
// merge of script-registries): a cell now reaches the default registry plus
// the `@scope:registry` of each scope npm's hidden lockfile says was
// installed, gets a generated npmrc (no tokens) and npm's cafile bound
// read-only at /etc/mcpcell/npm-cafile.pem.
//
// Each test is one attack and asserts the SECURE outcome. A test marked
// `todo: 'adv5 finding: ...'` failed on 474ac74 (an open hole; the suite
// reports it without failing); the others held.
//
// Local registries on the host's loopback:
//   DEFAULT  http, hand-rolled (below) so a version manifest can claim
//            another package's name, serving the top packages;
//   SCOPED   http (lib/npm_registry.mjs), the registry of @sc<id>, a token
//            for it in ~/.npmrc; it records every request.
//
// Open when written (todo): an alias or a tarball-URL dependency whose
// manifest claims a configured scope opens that scope's registry (npm's
// hidden lockfile records no "name" then); the whole cafile, a private key
// in it included, is readable by every script; a registry named with a
// trailing dot that the host's npm reaches through its proxy is opened
// directly (mcpcell's noproxy matching drops the empty label, npm's does not).
// A configured scope with "!" (valid for npm) is left out of the cells' npmrc,
// so npm in the cell asks the default registry for it (dependency confusion).
// Held: no token/_auth/keyfile in the cell; no other host loopback port.
// Unit side: tests/unit/adv_script_npm_test.cc.
//
// Run as root and as mcpcell-test:
//   cd tests/e2e && MCPCELL_BIN=../../build/mcpcell E2E_REQUIRE_ISOLATION=1 node --test adv5_script_registries.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const SC = `@sc${id}`;
const TOKEN = `npm_adv5SECRET${randomBytes(8).toString('hex')}`;
const AUTH_SECRET = `adv5authSECRET${randomBytes(6).toString('hex')}`;
const ALIAS_TOP = `adv5-alias-top-${id}`;
const EVIL = `adv5-evil-${id}`;
const EVIL_REG = `adv5-evilreg-${id}`;
const KEY_TOP = `adv5-keytop-${id}`;
const LEGIT_TOP = `adv5-legit-top-${id}`;
let sideHits = 0;
let side;

/** Packs { 'rel/path': text } (package.json included) as an npm tarball. */
function pack(files) {
  const dir = makeTempDir('adv5-pkg');
  const root = path.join(dir, 'package');
  mkdirSync(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeReadableFile(path.join(root, rel), text);
  }
  const file = path.join(dir, 'package.tgz');
  execFileSync('tar', ['-czf', file, '-C', dir, 'package']);
  const bytes = readFileSync(file);
  return { bytes, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}` };
}

/**
 * A registry whose packument for `key` carries `manifest` as its one
 * version, whatever name that manifest claims (npm's registry would not
 * serve that, a mirror or a hostile registry can), and `files` as its
 * tarball. entries: [{ key, manifest, files }].
 */
async function startLyingRegistry(entries) {
  const built = new Map(entries.map((e) => [e.key, { ...e, tar: pack({ 'package.json': JSON.stringify(e.tarballManifest ?? e.manifest), ...(e.files ?? {}) }) }]));
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const base = `http://127.0.0.1:${server.address().port}`;
    const url = decodeURIComponent(req.url.slice(1).split('?')[0]);
    const tgz = url.match(/^(.+)\/-\/[^/]+\.tgz$/);
    const e = built.get(tgz ? tgz[1] : url);
    if (!e) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
      return;
    }
    if (tgz) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': e.tar.bytes.length });
      res.end(e.tar.bytes);
      return;
    }
    const v = e.manifest.version;
    const tarball = `${base}/${e.key}/-/${e.key.replace(/^@[^/]+\//, '')}-${v}.tgz`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name: e.key, 'dist-tags': { latest: v }, versions: { [v]: { ...e.manifest, dist: { tarball, integrity: e.tar.integrity } } } }));
  });
  const sockets = new Set();
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`, requests,
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}

/** An install script that asks the scope's registry through npm and reads what the cell was given. */
const probe = (t) => `const { execFileSync } = require('child_process'); const fs = require('fs');
const t = ${JSON.stringify(t)};
const report = {};
const npm = (args) => { try { return 'ok ' + execFileSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30000 }).trim(); }
  catch (e) { return 'error ' + String(e.stderr || e.message).split('\\n').filter(Boolean).slice(-2).join(' | '); } };
if (t.scoped) report.view_scoped = npm(['view', t.scoped, 'name', '--json', '--fetch-retries=0']);
const rc = process.env.npm_config_userconfig || '';
report.npmrc = rc && fs.existsSync(rc) ? fs.readFileSync(rc, 'utf8') : 'none';
const read = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch (e) { return 'error ' + e.code; } };
report.cafile = read('/etc/mcpcell/npm-cafile.pem');
if (t.keyfile) report.keyfile = read(t.keyfile);
report.env = JSON.stringify(process.env);
fs.writeFileSync('report.json', JSON.stringify(report, null, 2));
`;

/**
 * From a legitimately scoped package (its scope's registry is open): the
 * host's loopback on another port, through the egress proxy (absolute URI,
 * CONNECT, under the registries' names) and directly; results in reach.json.
 */
const reachScript = (port) => `const http = require('http'); const net = require('net'); const fs = require('fs');
const px = new URL(process.env.HTTP_PROXY || process.env.http_proxy || 'http://127.0.0.1:3128');
const regs = [process.env.npm_config_registry, ${JSON.stringify(SC)}].filter(Boolean);
const out = {};
const get = (host, target) => new Promise((resolve) => {
  const r = http.request({ host: px.hostname, port: px.port, path: 'http://' + target + '/', headers: { host: target }, timeout: 4000 },
    (res) => { let b = ''; res.on('data', (d) => b += d); res.on('end', () => resolve(res.statusCode + ' ' + b.slice(0, 40))); });
  r.on('error', (e) => resolve('error ' + e.code)); r.on('timeout', () => { r.destroy(); resolve('timeout'); }); r.end(); });
const connect = (target) => new Promise((resolve) => {
  const s = net.connect({ host: px.hostname, port: Number(px.port), timeout: 4000 }, () => s.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n'));
  let b = ''; s.on('data', (d) => { b += d; if (b.includes('\\r\\n')) { s.destroy(); resolve(b.split('\\r\\n')[0]); } });
  s.on('error', (e) => resolve('error ' + e.code)); s.on('timeout', () => { s.destroy(); resolve('timeout'); }); });
const direct = (port) => new Promise((resolve) => { const s = net.connect({ host: '127.0.0.1', port, timeout: 3000 }, () => { s.destroy(); resolve('connected'); });
  s.on('error', (e) => resolve('error ' + e.code)); s.on('timeout', () => { s.destroy(); resolve('timeout'); }); });
(async () => {
  const regPort = new URL(process.env.npm_config_registry).port;
  for (const h of ['127.0.0.1', 'localhost', '[::1]', '127.0.0.2', '0.0.0.0']) {
    out['get ' + h] = await get(h, h + ':' + ${port});
    out['connect ' + h] = await connect(h + ':' + ${port});
  }
  out['get registry port, other path'] = await get('127.0.0.1', '127.0.0.1:' + regPort);
  out.direct = await direct(${port});
  fs.writeFileSync('reach.json', JSON.stringify(out, null, 2));
})();
`;

let home;
let certDir;
const servers = [];

before(async () => {
  home = mkdtempSync('/var/tmp/e2e-adv5-home-');
  chmodSync(home, 0o777);
  certDir = makeTempDir('adv5-ca');
  const run = (args) => execFileSync('openssl', args, { cwd: certDir, stdio: ['ignore', 'ignore', 'pipe'] });
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=adv5-${id}`]);
  // A combined PEM, as some tools write them: the key first, the certificate
  // after (npm's cafile reader splits on END CERTIFICATE; OpenSSL skips the key).
  writeReadableFile(path.join(certDir, 'bundle.pem'), readFileSync(path.join(certDir, 'ca.key'), 'utf8') + readFileSync(path.join(certDir, 'ca.pem'), 'utf8'));
  chmodSync(path.join(certDir, 'ca.key'), 0o644);

  // A listener on the host's loopback that no cell may reach.
  side = http.createServer((req, res) => { sideHits += 1; res.end('side'); });
  await new Promise((resolve) => side.listen(0, '127.0.0.1', resolve));
  const scoped = await startPackageRegistry([
    { name: `${SC}/other`, version: '1.0.0', files: { 'index.js': '' } },
    { name: `${SC}/probe`, version: '1.0.0', manifest: { scripts: { install: 'node reach.js' } }, files: { 'reach.js': reachScript(side.address().port) } },
  ]);
  const bin = (name) => ({ bin: { [name]: 'server.js' } });
  const server = { 'server.js': '#!/usr/bin/env node\nprocess.stdin.pipe(process.stdout);\n' };
  const def = await startLyingRegistry([
    {
      key: ALIAS_TOP,
      manifest: { name: ALIAS_TOP, version: '1.0.0', ...bin(ALIAS_TOP), dependencies: { [`${SC}/x`]: `npm:${EVIL}@1.0.0`, [`${SC}/y`]: `npm:${EVIL_REG}@1.0.0` } },
      files: server,
    },
    {
      // The tarball and the registry both say it is the scope's package.
      key: EVIL,
      manifest: { name: `${SC}/x`, version: '1.0.0', scripts: { install: 'node probe.js' } },
      files: { 'probe.js': probe({ scoped: `${SC}/other` }) },
    },
    {
      // Only the registry's manifest says so; the tarball says its own name.
      key: EVIL_REG,
      manifest: { name: `${SC}/y`, version: '1.0.0' },
      tarballManifest: { name: EVIL_REG, version: '1.0.0' },
    },
    { key: LEGIT_TOP, manifest: { name: LEGIT_TOP, version: '1.0.0', ...bin(LEGIT_TOP), dependencies: { [`${SC}/probe`]: '1.0.0' } }, files: server },
    {
      key: KEY_TOP,
      manifest: { name: KEY_TOP, version: '1.0.0', ...bin(KEY_TOP), scripts: { install: 'node probe.js' } },
      files: { ...server, 'probe.js': probe({ keyfile: path.join(certDir, 'ca.key') }) },
    },
  ]);
  servers.push(def, scoped);
  const port = (r) => new URL(r.url).port;
  writeReadableFile(path.join(home, '.npmrc'), [
    `registry=${def.url}`,
    `${SC}:registry=${scoped.url}`,
    `//127.0.0.1:${port(scoped)}/:_authToken=${TOKEN}`,
    `//127.0.0.1:${port(def)}/:_auth=${Buffer.from(`u:${AUTH_SECRET}`).toString('base64')}`,
    `cafile=${path.join(certDir, 'bundle.pem')}`,
    `keyfile=${path.join(certDir, 'ca.key')}`,
    `certfile=${path.join(certDir, 'ca.pem')}`,
    'fetch-retries=0',
    '',
  ].join('\n'));
});

after(async () => {
  for (const s of servers) await s.close();
  side?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  removeTempDirs();
});

const installDir = (top) => path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`);
const reportAt = (top, pkg) => {
  const file = path.join(installDir(top), 'node_modules', ...(pkg ? [pkg] : []), 'report.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
};

test('an alias whose registry manifest claims a configured scope is refused, and does not open that scope\'s registry', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const [def, scoped] = servers;
  const r = await runMcpcell(['install', '--npm-scope', SC, `npx://${ALIAS_TOP}@1.0.0`], { env: scriptsEnv(home), guardMs: 110_000 });
  // npm fetches a registry tarball only from the registry of the name it is
  // installed under (allow-remote=none): an alias named for the scope whose
  // tarball is on the default registry is refused before any script runs.
  assert.notEqual(r.code, 0, `the alias was installed under the scope: ${r.stderr}`);
  assert.match(r.stderr, /EALLOWREMOTE|type "remote" have been disabled/, r.stderr);
  assert.ok(!existsSync(path.join(installDir(ALIAS_TOP), 'node_modules', SC, 'x', 'package.json')), 'the alias is in the cache');
  const fromCell = scoped.requests.filter((q) => q.includes('other'));
  assert.deepEqual(fromCell, [], 'the scope\'s registry was asked by the alias\'s script');
  void def;
});

test('npm\'s cafile holding a private key: the cell sees the certificates, never the key', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const r = await runMcpcell(['install', `npx://${KEY_TOP}@1.0.0`], { env: scriptsEnv(home), guardMs: 110_000 });
  assert.equal(r.code, 0, r.stderr);
  const report = reportAt(KEY_TOP, KEY_TOP);
  assert.ok(report, 'the script ran');
  t.diagnostic(`cafile in the cell: ${report.cafile.slice(0, 60)}...`);
  assert.ok(!report.cafile.includes('PRIVATE KEY'), 'the private key in npm\'s cafile is readable by the install script');
});

test('held: no token, _auth, keyfile or certfile reaches the cell (npmrc, environment, filesystem)', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  let report = reportAt(KEY_TOP, KEY_TOP);
  if (!report) {
    const r = await runMcpcell(['install', `npx://${KEY_TOP}@1.0.0`], { env: scriptsEnv(home), guardMs: 110_000 });
    assert.equal(r.code, 0, r.stderr);
    report = reportAt(KEY_TOP, KEY_TOP);
  }
  const b64 = Buffer.from(`u:${AUTH_SECRET}`).toString('base64');
  for (const secret of [TOKEN, AUTH_SECRET, b64]) {
    assert.ok(!report.npmrc.includes(secret), report.npmrc);
    assert.ok(!report.env.includes(secret), 'a secret in the cell\'s environment');
  }
  assert.ok(!/keyfile|certfile|_auth/.test(report.npmrc), report.npmrc);
  assert.match(report.keyfile, /^error E(NOENT|ACCES)/, 'npm\'s client keyfile is not in the cell');
});

/** A forward HTTP proxy for plain http:// requests that counts them; every request goes to 127.0.0.1. */
async function startForwardProxy() {
  const counter = { n: 0 };
  const server = http.createServer((req, res) => {
    counter.n += 1;
    const target = new URL(req.url);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const up = http.request({ host: '127.0.0.1', port: target.port, path: target.pathname + target.search, method: req.method, headers },
      (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, counter, port: server.address().port };
}

test('a registry named with a trailing dot that npm proxies (noproxy does not match "localhost.") is not opened directly', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `adv5-dot-${id}`;
  const other = `adv5-dot-other-${id}`;
  const reg = await startPackageRegistry([
    { name: other, version: '1.0.0', files: { 'index.js': '' } },
    { name, version: '1.0.0', manifest: { bin: { [name]: 'server.js' }, scripts: { install: `npm view ${other} name --fetch-retries=0 > viewed.txt` } }, files: { 'server.js': '' } },
  ], { host: 'localhost.' });
  const px = await startForwardProxy();
  t.after(async () => { await reg.close(); px.server.close(); });
  const h = mkdtempSync('/var/tmp/e2e-adv5-dot-');
  chmodSync(h, 0o777);
  t.after(() => rmSync(h, { recursive: true, force: true }));
  const PW = `dotSECRET${randomBytes(4).toString('hex')}`;
  writeReadableFile(path.join(h, '.npmrc'), `registry=${reg.url}\nproxy=http://u:${PW}@127.0.0.1:${px.port}/\nnoproxy=localhost\nfetch-retries=0\n`);
  const r = await runMcpcell(['install', `npx://${name}@1.0.0`], { env: scriptsEnv(h), guardMs: 110_000 });
  t.diagnostic(r.stderr.split('\n').filter((l) => /network|reach|proxy/.test(l)).join('\n'));
  assert.ok(px.counter.n > 0, `the host's npm went through the proxy (npm's own noproxy rule): ${r.stderr}`);
  assert.ok(!r.stderr.includes(PW), 'no proxy password');
  assert.ok(r.stderr.includes(`the install scripts do not reach ${reg.url.replace(/\/$/, '')} (npm's registry), which the host's npm reaches through npm config proxy`), r.stderr);
});

test('held: a script of a legitimately scoped package reaches no other host loopback port (via the proxy, CONNECT, other loopback names, directly)', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const [def, scoped] = servers;
  const r = await runMcpcell(['install', '--npm-scope', SC, `npx://${LEGIT_TOP}@1.0.0`], { env: scriptsEnv(home), guardMs: 110_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stderr.includes(`network only to the npm registries ${def.url.replace(/\/$/, '')} and ${scoped.url.replace(/\/$/, '')};`), r.stderr);
  const file = path.join(installDir(LEGIT_TOP), 'node_modules', SC, 'probe', 'reach.json');
  const out = JSON.parse(readFileSync(file, 'utf8'));
  t.diagnostic(JSON.stringify(out));
  assert.equal(sideHits, 0, `a script reached the side listener: ${JSON.stringify(out)}`);
  for (const [k, v] of Object.entries(out)) {
    if (k.startsWith('get registry')) continue;
    assert.ok(!/^(200|HTTP\/1\.[01] 200)/.test(v), `${k}: ${v}`);
  }
});

test('a tarball-URL dependency named for a configured scope is refused, and does not open that scope\'s registry', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const scoped = servers[1];
  const evilT = `adv5-evilt-${id}`;
  const topT = `adv5-tarball-top-${id}`;
  const tarHost = await startLyingRegistry([
    { key: evilT, manifest: { name: `${SC}/t`, version: '1.0.0', scripts: { install: 'node probe.js' } }, files: { 'probe.js': probe({ scoped: `${SC}/other` }) } },
  ]);
  const tarUrl = `${tarHost.url}${evilT}/-/${evilT}-1.0.0.tgz`;
  const def2 = await startLyingRegistry([
    { key: topT, manifest: { name: topT, version: '1.0.0', bin: { [topT]: 'server.js' }, dependencies: { [`${SC}/t`]: tarUrl } }, files: { 'server.js': '' } },
  ]);
  t.after(async () => { await tarHost.close(); await def2.close(); });
  const h = mkdtempSync('/var/tmp/e2e-adv5-tar-');
  chmodSync(h, 0o777);
  t.after(() => rmSync(h, { recursive: true, force: true }));
  writeReadableFile(path.join(h, '.npmrc'), `registry=${def2.url}\n${SC}:registry=${scoped.url}\nfetch-retries=0\n`);
  const before = scoped.requests.length;
  const r = await runMcpcell(['install', `npx://${topT}@1.0.0`], { env: scriptsEnv(h), guardMs: 110_000 });
  // A URL dependency is refused outright now (allow-remote=none, adv9): no
  // tarball from anywhere but a registry, so no script of one runs.
  assert.notEqual(r.code, 0, `a tarball-URL dependency was installed: ${r.stderr}`);
  assert.match(r.stderr, /EALLOWREMOTE|type "remote" have been disabled/, r.stderr);
  assert.deepEqual(tarHost.requests ?? [], [], 'the host\'s npm fetched the URL a package named');
  assert.deepEqual(scoped.requests.slice(before), [], 'the scope\'s registry was asked by the tarball\'s script');
});

test('a configured scope with a character npm accepts ("@x!y") is pinned in the cells\' npmrc: npm in the cell never asks the default registry for it', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const BANG = `@bang${id}!x`;
  const topB = `adv5-bang-top-${id}`;
  const bangReg = await startPackageRegistry([
    { name: `${BANG}/p`, version: '1.0.0', manifest: { scripts: { install: `npm view ${BANG}/conf name --fetch-retries=0 > viewed.txt 2>&1 || true` } }, files: { 'index.js': '' } },
  ]);
  const def3 = await startPackageRegistry([
    { name: topB, version: '1.0.0', manifest: { bin: { [topB]: 'server.js' }, dependencies: { [`${BANG}/p`]: '1.0.0' } }, files: { 'server.js': '' } },
    { name: `${BANG}/conf`, version: '6.6.6', files: { 'index.js': '' } },
  ]);
  t.after(async () => { await bangReg.close(); await def3.close(); });
  const h = mkdtempSync('/var/tmp/e2e-adv5-bang-');
  chmodSync(h, 0o777);
  t.after(() => rmSync(h, { recursive: true, force: true }));
  writeReadableFile(path.join(h, '.npmrc'), `registry=${def3.url}\n${BANG}:registry=${bangReg.url}\nfetch-retries=0\n`);
  const r = await runMcpcell(['install', '--npm-scope', BANG, `npx://${topB}@1.0.0`], { env: scriptsEnv(h), guardMs: 110_000 });
  assert.equal(r.code, 0, r.stderr);
  const viewed = path.join(h, '.cache', 'mcpcell', 'npx', `${topB}@1.0.0`, 'node_modules', BANG, 'p', 'viewed.txt');
  t.diagnostic(`the script's npm view: ${existsSync(viewed) ? readFileSync(viewed, 'utf8').trim() : 'none'}`);
  const asked = def3.requests.filter((q) => q.includes('conf'));
  assert.deepEqual(asked, [], `the default registry was asked for ${BANG}/conf from the cell`);
});
