// What an install-script cell gets of the host npm's TLS and registry
// settings (source/script_npm.h), end to end with the real npm:
//   - npm's inline `ca` reaches Node too: NODE_EXTRA_CA_CERTS names one file
//     with the cafile's certificates and every inline one (node-gyp and
//     prebuild-install download through Node, not npm);
//
// Run as root and as mcpcell-test:
//   cd tests/e2e && MCPCELL_BIN=../../build/mcpcell E2E_REQUIRE_ISOLATION=1 node --test npm_script_credentials.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
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
