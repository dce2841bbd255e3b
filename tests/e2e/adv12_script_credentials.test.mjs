// Adversary pass adv12 against what an install-script cell gets of the host
// npm's settings (source/script_npm.cc, source/url_credential.cc,
// cell/script_cell.cc AddNpmConfig). Each test asserts the SECURE outcome;
// a test marked todo is a finding (it fails on main 74765d7), the rest held.
//
// Run as root: cd tests/e2e && MCPCELL_BIN=... E2E_REQUIRE_ISOLATION=1 node --test adv12_script_credentials.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');

after(removeTempDirs);
const { home, install } = scriptsHome('e2e-adv12-script-home');

function makeCert(dir, cn) {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', path.join(dir, `${cn}.key`), '-out', path.join(dir, `${cn}.pem`), '-days', '2', '-subj', `/CN=${cn}`],
  { stdio: ['ignore', 'ignore', 'pipe'] });
  return { cert: readFileSync(path.join(dir, `${cn}.pem`), 'utf8'), key: readFileSync(path.join(dir, `${cn}.key`), 'utf8') };
}

/** An install script that records what the cell holds: the CA file, the npmrc, the registry in its env. */
const probe = `const fs = require('fs');
const read = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch (e) { return 'error ' + e.code; } };
const ca = process.env.NODE_EXTRA_CA_CERTS || '';
const text = ca ? read(ca) : '';
fs.writeFileSync('adv12-report.json', JSON.stringify({ ca, size: text.length, text: text.length > 200000 ? text.slice(-4000) : text,
  npmrc: read(process.env.npm_config_userconfig || '/nonexistent'), registry: process.env.npm_config_registry || '' }));
`;

async function installWithProbe(t, top) {
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: { install: 'node probe.js' } },
    files: { 'server.js': '#!/usr/bin/env node\n', 'probe.js': probe },
  }]);
  t.after(() => reg.close());
  return { reg, ...(await install(top, reg)) };
}

function reportOf(installDir, top, r) {
  const file = path.join(installDir, 'node_modules', top, 'adv12-report.json');
  assert.ok(existsSync(file), `the script ran:\n${r.stderr}`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * A registry that takes its token in the path (as Gemfury does,
 * https://npm.fury.io/TOKEN/user/): a front on the loopback that strips
 * `/${secret}` and asks `reg`, its packuments' tarball URLs under the token.
 */
async function startTokenFront(t, reg, secret) {
  const front = http.createServer((req, res) => {
    const upstream = http.request({ host: '127.0.0.1', port: reg.port, method: req.method, path: req.url.replace(`/${secret}`, ''),
      headers: req.headers }, (up) => {
      const chunks = [];
      up.on('data', (c) => chunks.push(c));
      up.on('end', () => {
        let body = Buffer.concat(chunks);
        // Tarballs under the registry's URL, token included (npm's allow-remote=none wants them there).
        if (/json/.test(up.headers['content-type'] ?? '')) {
          const base = `http://${req.headers.host}/`;
          body = Buffer.from(body.toString().split(base).join(`${base}${secret}/`));
        }
        const headers = { ...up.headers, 'content-length': body.length };
        delete headers['transfer-encoding'];
        res.writeHead(up.statusCode, headers);
        res.end(body);
      });
    });
    upstream.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(upstream);
  });
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { front.closeAllConnections?.(); front.close(() => resolve()); }));
  return front;
}

// WriteScriptCafile copies only the certificates of npm's cafile into a file
// of the install directory — unless the cafile is over 16 MiB: then it comes
// back as the host path "for the cell to refuse" (script_npm.h), and
// AddNpmConfig (script_cell.cc) refuses only a relative path or a file that is
// not regular: it binds the whole host file at /etc/mcpcell/npm-cafile.pem,
// so every install script reads all of it (a bundle with its private key,
// or whatever file the cafile setting names, e.g. from a client's env block).
test('a cafile over 16 MiB does not reach the install scripts whole', {
  timeout: 90_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const certDir = makeTempDir('adv12-bigca');
  const { cert, key } = makeCert(certDir, `big-ca-${id}`);
  const big = path.join(certDir, 'bundle.pem');
  // A certificate, padding (comments are ignored by npm's and OpenSSL's readers), then the key.
  writeFileSync(big, cert + `# ${'x'.repeat(120)}\n`.repeat(140_000) + key, { mode: 0o644 });
  writeReadableFile(path.join(home(), '.npmrc'), `cafile=${big}\nfetch-retries=0\n`);
  const top = `adv12-bigca-${id}`;
  const { r, installDir } = await installWithProbe(t, top);
  // Too large to read for its certificates: the install is refused before
  // any script cell runs, naming the file (never bound whole).
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /cafile .*bundle\.pem: is over 16 MiB/, r.stderr);
  assert.ok(!existsSync(path.join(installDir, 'node_modules', top, 'report.json')), 'an install script ran');
});

// Held: a registry URL with a token in its path (Gemfury) is given to no
// cell; userinfo is cut off. And what the shape rule does not see: a
// base64 token whose '+', '/' and '=' are percent-encoded (runs of fewer than
// 20 letters and digits), given to the cell in npm_config_registry and its
// npmrc — the finding (unit side: adv12_secret_leaks_test.cc).
test('a registry URL whose path token is percent-encoded base64 is not given to the install scripts', {
  timeout: 90_000,
}, async (t) => {
  const top = `adv12-regtok-${id}`;
  if (await skipWithoutCell(t)) return;
  const reg = await startPackageRegistry([{
    name: top, version: '1.0.0',
    manifest: { bin: { [top]: 'server.js' }, scripts: { install: 'node probe.js' } },
    files: { 'server.js': '#!/usr/bin/env node\n', 'probe.js': probe },
  }]);
  t.after(() => reg.close());
  const secret = 'Zm9vYmFy%2BYmF6cXV4%2FcXV1eA%3D%3D';
  const front = await startTokenFront(t, reg, secret);
  const url = `http://127.0.0.1:${front.address().port}/${secret}/`;
  writeReadableFile(path.join(home(), '.npmrc'), `registry=${url}\nfetch-retries=0\n`);
  const { r, installDir } = await install(top, { ...reg, url });
  const file = path.join(installDir, 'node_modules', top, 'adv12-report.json');
  if (!existsSync(file)) return t.skip(`the install did not run the script here:\n${r.stderr.slice(-800)}`);
  const report = JSON.parse(readFileSync(file, 'utf8'));
  assert.ok(!report.registry.includes(secret) && !report.npmrc.includes(secret),
    `the registry's token reached the cell: npm_config_registry=${report.registry}`);
});

// The host's npm install runs with --loglevel=http (npx_install.cc: "one line
// per registry request on stderr, so the user (and a client's log) sees the
// install moving"): npm prints every request's URL, the registry's path
// included — the token of a registry that takes it in its path (the very case
// url_credential.h keeps out of the cells) goes to the client's stderr on
// every install (npm masks a URL's password, never its path).
test('installing from a registry whose URL holds a token in its path does not print the token', {
  timeout: 90_000,
}, async (t) => {
  const top = `adv12-pathtok-${id}`;
  const reg = await startPackageRegistry([{ name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' } },
    files: { 'server.js': '#!/usr/bin/env node\n' } }]);
  t.after(() => reg.close());
  const secret = 'a1B2c3D4e5F6g7H8i9J0k1L2';  // the shape RegistryUrlHoldsToken takes for a token
  const front = await startTokenFront(t, reg, secret);
  const url = `http://127.0.0.1:${front.address().port}/${secret}/`;
  writeReadableFile(path.join(home(), '.npmrc'), `registry=${url}\nfetch-retries=0\n`);
  const { r } = await install(top, { ...reg, url });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stderr.includes(secret), `the registry's path token reached the client's stderr:\n${r.stderr}`);
});
