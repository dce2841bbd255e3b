// What an install-script cell gets of the host npm's TLS and registry
// settings (source/script_npm.h), end to end with the real npm:
//   - npm's inline `ca` reaches Node too: NODE_EXTRA_CA_CERTS names one file
//     with the cafile's certificates and every inline one (node-gyp and
//     prebuild-install download through Node, not npm);
//   - a registry whose URL holds a token in its path (Gemfury's
//     https://npm.fury.io/TOKEN/user/) is given to no cell: not its URL (npmrc,
//     npm_config_registry), not the network to it, not npm's lockfiles that
//     record its tarball URLs; stderr says so once,
//     naming the setting, never the token (source/url_credential.h).
//
// Run as root and as mcpcell-test:
//   cd tests/e2e && MCPCELL_BIN=../../build/mcpcell E2E_REQUIRE_ISOLATION=1 node --test npm_script_credentials.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
import { makeCertificates } from './lib/tls_certs.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');

after(removeTempDirs);
const { home, install } = scriptsHome('e2e-script-cred-home');

/** A self-signed CA certificate (PEM) named `cn`, made with openssl. */
function makeCert(dir, cn) {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', path.join(dir, `${cn}.key`), '-out', path.join(dir, `${cn}.pem`), '-days', '2', '-subj', `/CN=${cn}`],
  { stdio: ['ignore', 'ignore', 'pipe'] });
  return readFileSync(path.join(dir, `${cn}.pem`), 'utf8');
}

/** An install script that records what Node in the cell is told to trust. */
const caProbe = `const fs = require('fs');
const file = process.env.NODE_EXTRA_CA_CERTS || '';
let text = '';
try { text = fs.readFileSync(file, 'utf8'); } catch (e) { text = 'error ' + e.code; }
fs.writeFileSync('ca-report.json', JSON.stringify({ file, text }));
`;

/** Installs a package `top` whose install script is `probe` from a local registry: { r, installDir }. */
async function installWithProbe(t, top, probe) {
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: { install: 'node probe.js' } },
    files: { 'server.js': '#!/usr/bin/env node\n', 'probe.js': probe },
  }]);
  t.after(() => reg.close());
  return install(top, reg);
}

test('npm\'s inline ca reaches Node in the cell: NODE_EXTRA_CA_CERTS holds the cafile\'s and the inline certificates', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const certDir = makeTempDir('script-cred-ca');
  const fileCert = makeCert(certDir, `file-ca-${id}`);
  const inlineCert = makeCert(certDir, `inline-ca-${id}`);
  // The npmrc the user has: a cafile and an inline ca (ini reads a quoted value as JSON).
  writeReadableFile(path.join(home(), '.npmrc'),
    `cafile=${path.join(certDir, `file-ca-${id}.pem`)}\nca[]=${JSON.stringify(inlineCert.trim())}\nfetch-retries=0\n`);
  const top = `e2e-inline-ca-${id}`;
  const { r, installDir } = await installWithProbe(t, top, caProbe);
  assert.equal(r.code, 0, r.stderr);
  const reportFile = path.join(installDir, 'node_modules', top, 'ca-report.json');
  assert.ok(existsSync(reportFile), `the script ran:\n${r.stderr}`);
  const report = JSON.parse(readFileSync(reportFile, 'utf8'));
  assert.equal(report.file, '/etc/mcpcell/npm-cafile.pem');
  const body = (pem) => pem.trim().split('\n').slice(1, -1).join('\n');
  assert.ok(report.text.includes(body(fileCert)), `the cafile's certificate is in NODE_EXTRA_CA_CERTS:\n${report.text}`);
  assert.ok(report.text.includes(body(inlineCert)), `the inline ca is in NODE_EXTRA_CA_CERTS:\n${report.text}`);
  assert.ok(!report.text.includes('PRIVATE KEY'));
});

test('a registry whose CA is an inline ca alone: Node in the cell verifies it (NODE_EXTRA_CA_CERTS)', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const certDir = makeTempDir('script-cred-tls');
  const certs = makeCertificates(certDir, `inline-tls-ca-${id}`);
  const top = `e2e-inline-tls-${id}`;
  // Node itself (a script's own download), by address: the certificate names 127.0.0.1 too.
  const probe = `const https = require('https'); const fs = require('fs');
const url = process.env.npm_config_registry.replace('//localhost:', '//127.0.0.1:');
https.get(url, (res) => { res.resume(); fs.writeFileSync('tls-report.txt', 'ok ' + res.statusCode); })
  .on('error', (e) => fs.writeFileSync('tls-report.txt', 'error ' + e.code));
`;
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: { install: 'node probe.js' } },
    files: { 'server.js': '#!/usr/bin/env node\n', 'probe.js': probe },
  }], { tls: certs, host: 'localhost' });
  t.after(() => reg.close());
  writeReadableFile(path.join(home(), '.npmrc'), `ca[]=${JSON.stringify(readFileSync(certs.ca, 'utf8').trim())}\nfetch-retries=0\n`);
  const { r, installDir } = await install(top, reg);
  assert.equal(r.code, 0, r.stderr);
  const report = readFileSync(path.join(installDir, 'node_modules', top, 'tls-report.txt'), 'utf8');
  assert.match(report, /^ok (200|404)$/, `Node in the cell did not verify the registry with the inline ca: ${report}`);
});

test('an inline ca that is a private key is refused, naming the setting, and never reaches a cell', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const certDir = makeTempDir('script-cred-key');
  makeCert(certDir, `key-ca-${id}`);
  const key = readFileSync(path.join(certDir, `key-ca-${id}.key`), 'utf8').trim();
  writeReadableFile(path.join(home(), '.npmrc'), `ca[]=${JSON.stringify(key)}\nfetch-retries=0\n`);
  const top = `e2e-key-ca-${id}`;
  const { r, installDir } = await installWithProbe(t, top, caProbe);
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /npm config ca.*entry 1 of 1 is not a PEM certificate/, r.stderr);
  assert.ok(!r.stderr.includes(key.split('\n')[1]), 'the key is not echoed');
  assert.ok(!existsSync(path.join(installDir, 'node_modules', top, 'ca-report.json')), 'no script ran');
});

/**
 * A front for the registry on port regPort() that serves it below /<token>/
 * (as Gemfury does) and records every path asked: { url, port, paths, close() }.
 */
async function startTokenFront(regPort, token) {
  const paths = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url);
    const inner = req.url.startsWith(`/${token}/`) ? req.url.slice(token.length + 1) : req.url;
    const up = http.request({ host: '127.0.0.1', port: regPort(), path: inner, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${regPort()}`, 'accept-encoding': 'identity' } },
      (r) => {
        // Its packuments name tarballs below the token too, as such a registry serves them.
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => {
          let body = Buffer.concat(chunks);
          if (String(r.headers['content-type']).includes('json')) {
            body = Buffer.from(body.toString('utf8').replaceAll(`http://127.0.0.1:${regPort()}/`, front.url));
          }
          const headers = { ...r.headers, 'content-length': body.length };
          delete headers['transfer-encoding'];
          res.writeHead(r.statusCode, headers);
          res.end(body);
        });
      });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const front = { url: `http://127.0.0.1:${server.address().port}/${token}/`, port: server.address().port, paths, close: () => new Promise((resolve) => server.close(() => resolve())) };
  return front;
}

/** An install script that records what it was given of the registry, and asks the registry's port through the proxy. */
const registryProbe = (port) => `const fs = require('fs'); const http = require('http');
const rc = process.env.npm_config_userconfig || '';
const read = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch (e) { return 'error ' + e.code; } };
const report = { env: JSON.stringify(process.env), npmrc: rc ? read(rc) : 'none',
  hidden_lockfile: read('../.package-lock.json'), lockfile: read('../../package-lock.json') };
const px = new URL(process.env.HTTP_PROXY || process.env.http_proxy || 'http://127.0.0.1:1');
const r = http.request({ host: px.hostname, port: px.port, path: 'http://127.0.0.1:${port}/from-the-cell', headers: { host: '127.0.0.1:${port}' }, timeout: 4000 },
  (res) => { report.answer = String(res.statusCode); res.resume(); res.on('end', done); });
r.on('error', (e) => { report.answer = 'error ' + e.code; done(); });
r.on('timeout', () => { r.destroy(); });
r.end();
function done() { fs.writeFileSync('reg-report.json', JSON.stringify(report)); }
`;

test('a registry with a token in its path (Gemfury style) is given to no cell: no URL, no network, lockfiles hidden, said once without the token', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const token = `Tk${randomBytes(12).toString('hex')}9`;
  writeReadableFile(path.join(home(), '.npmrc'), 'fetch-retries=0\n');
  const top = `e2e-path-token-${id}`;
  let reg;
  const front = await startTokenFront(() => reg.port, token);
  t.after(() => front.close());
  reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: { install: 'node probe.js' } },
    files: { 'server.js': '#!/usr/bin/env node\n', 'probe.js': registryProbe(front.port) },
  }]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, { url: front.url });
  t.diagnostic(r.stderr.split('\n').filter((l) => l.startsWith('mcpcell')).join('\n'));
  assert.equal(r.code, 0, r.stderr);
  assert.ok(front.paths.some((p) => p.startsWith(`/${token}/`)), 'the host\'s npm installed through the token URL');
  // The host's npm prints its own fetches with the URL ("npm http fetch GET
  // 200 <url>"): that is npm's line, on the host; mcpcell's never name it.
  const ours = r.stderr.split('\n').filter((l) => l.startsWith('mcpcell'));
  assert.ok(!ours.some((l) => l.includes(token)), `mcpcell printed the token:\n${ours.join('\n')}`);
  const said = r.stderr.split('\n').filter((l) => l.includes('npm config registry carries what looks like a token in its URL (not shown)'));
  assert.equal(said.length, 1, `said once:\n${r.stderr}`);
  assert.match(said[0], /\/\/HOST\/:_authToken=/);
  assert.match(r.stderr, /in a native cell of their own \(1 of 1; .*; no network;/, r.stderr);
  const reportFile = path.join(installDir, 'node_modules', top, 'reg-report.json');
  assert.ok(existsSync(reportFile), 'the script ran');
  const report = JSON.parse(readFileSync(reportFile, 'utf8'));
  assert.ok(!report.env.includes(token), 'the token is in the cell\'s environment');
  assert.ok(!report.npmrc.includes(token), `the token is in the cell's npmrc:\n${report.npmrc}`);
  assert.equal(JSON.parse(report.env).npm_config_registry, 'https://unusable-registry.invalid/');
  // npm recorded the tarball's URL, token and all, in its lockfiles; mcpcell
  // replaced the token there (adv19), and the cell sees them empty anyway.
  const published = readFileSync(path.join(installDir, 'node_modules', '.package-lock.json'), 'utf8');
  assert.ok(published.includes('[token-removed-by-mcpcell]'), 'the lockfile records the tarball\'s URL (the probe works)');
  assert.ok(!published.includes(token), 'the published lockfile keeps the registry\'s path token');
  assert.ok(!report.hidden_lockfile.includes(token), `the token is in the hidden lockfile the cell reads:\n${report.hidden_lockfile.slice(0, 400)}`);
  assert.ok(!report.lockfile.includes(token), 'the token is in the lockfile the cell reads');
  t.diagnostic(`the cell's request to the registry's port: ${report.answer}`);
  assert.ok(!front.paths.includes('/from-the-cell'), 'the cell reached the registry');
});
