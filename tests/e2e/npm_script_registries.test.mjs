// Issue 14 items 1/2, real npm configs: the install-script cell reaches the
// registries the host's npm uses for the installed packages — the default
// one and a scope's own (`@scope:registry`) — each as the host's npm does,
// with npm's `cafile` (a registry behind a private CA), and never with a
// token. A registry the host's npm reaches only through an upstream proxy
// is not reached (mcpcell's egress proxy cannot chain), and that is said up
// front and in the failure, naming the setting and not its password.
// Local registries (lib/npm_registry.mjs) on the host's loopback:
//   DEFAULT  http, the user's registry, serving the top packages;
//   SCOPED   http, the registry of @sc<id>, a token for it in ~/.npmrc;
//   TLS      https://localhost with a certificate of a CA made here, the
//            registry of @tls<id>, the CA given as npm's cafile;
//   PROXIED  http, reached by the host's npm through a forward proxy
//            (npm config proxy with a password, or HTTPS_PROXY, and with
//            NO_PROXY exempting it).
// Run as root and as mcpcell-test.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsEnv, startPackageRegistry } from './lib/npm_registry.mjs';
import { makeCertificates } from './lib/tls_certs.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const SC = `@sc${id}`;
const TLS = `@tls${id}`;
const UNUSED = `@unused${id}`;
const TOP = `e2e-reg-top-${id}`;
const TLS_TOP = `e2e-reg-tlstop-${id}`;
const PX_OK = `e2e-reg-px-ok-${id}`;
const DISGUISED_TOP = `e2e-reg-disguised-${id}`;
const BUNDLER = `e2e-reg-bundler-${id}`;
const PX_NEEDS = `e2e-reg-px-needs-${id}`;
const TOKEN = `npm_regSECRET${randomBytes(8).toString('hex')}`;
const PROXY_PASSWORD = `pxSECRET${randomBytes(6).toString('hex')}`;

/** An install script that asks npm (and Node itself) for things and writes what happened to report.json. */
const probeScript = (t) => `const { execFileSync } = require('child_process');
const fs = require('fs'); const https = require('https');
const t = ${JSON.stringify(t)};
const report = {};
const npm = (args) => { try { return 'ok ' + execFileSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60000 }).trim(); }
  catch (e) { return 'error ' + String(e.stderr || e.message).split('\\n').filter(Boolean).slice(-3).join(' | '); } };
report.view_scoped = npm(['view', t.scopedOther, 'name', '--json']);
if (t.unusedScope) report.view_unused_scope = npm(['view', t.unusedScope + '/x', 'name', '--json', '--fetch-retries=0']);
if (t.defaultName) report.view_default = npm(['view', t.defaultName, 'name', '--json']);
report.config_scoped = npm(['config', 'get', t.scope + ':registry']);
const rc = process.env.npm_config_userconfig || '';
report.npmrc = rc && fs.existsSync(rc) ? fs.readFileSync(rc, 'utf8') : 'none';
report.env_has_token = JSON.stringify(process.env).includes(t.token);
report.npmrc_has_token = report.npmrc.includes(t.token);
report.extra_ca = process.env.NODE_EXTRA_CA_CERTS || 'none';
(async () => {
  if (t.nodeFetch) {
    // Node itself (a script's own download): verified with NODE_EXTRA_CA_CERTS.
    // By address: a name the cell's resolver may not know; the certificate names both.
    const url = report.config_scoped.replace(/^ok /, '').replace('//localhost:', '//127.0.0.1:') + encodeURIComponent(t.scopedOther);
    report.node_https = await new Promise((resolve) => https.get(url, (res) => { res.resume(); resolve('ok ' + res.statusCode); })
      .on('error', (e) => resolve('error ' + e.code)));
  }
  fs.writeFileSync('report.json', JSON.stringify(report, null, 2));
  console.error('probe report: ' + JSON.stringify(report));
})();
`;

/** A package with one install script, probe.js, built from `probe`. */
const probePackage = (name, probe) => ({ name, version: '1.0.0', manifest: { scripts: { install: 'node probe.js' } }, files: { 'probe.js': probeScript(probe) } });
/** A top package with a bin that depends on `deps`. */
const topPackage = (name, deps) => ({
  name, version: '1.0.0',
  manifest: { bin: { [name]: 'server.js' }, dependencies: Object.fromEntries(deps.map((d) => [d, '1.0.0'])) },
  files: { 'server.js': '#!/usr/bin/env node\nprocess.stdin.pipe(process.stdout);\n' },
});

let home;
let caDir;
const registries = [];
let proxy;
let proxied = 0;

/** A forward HTTP proxy for plain http:// requests (what npm sends a `proxy` for an http registry). */
async function startForwardProxy() {
  const server = http.createServer((req, res) => {
    proxied += 1;
    const target = new URL(req.url);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const up = http.request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers },
      (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

before(async () => {
  // A home outside /tmp, as a user's is (npm_scripts.test.mjs says why).
  home = mkdtempSync('/var/tmp/e2e-regs-home-');
  chmodSync(home, 0o777);
  caDir = makeTempDir('regs-ca');
  const certs = makeCertificates(caDir, `e2e-ca-${id}`);
  const def = await startPackageRegistry([
    topPackage(TOP, [`${SC}/addon`]),
    topPackage(TLS_TOP, [`${TLS}/addon`]),
    { name: `e2e-reg-plain-${id}`, version: '1.0.0', files: { 'index.js': '' } },
    {
      name: DISGUISED_TOP, version: '1.0.0',
      // (An alias named for the scope, `npm:PKG`, is refused by npm itself now:
      // its tarball is not on the scope's registry: adv5_script_registries.)
      manifest: { bin: { [DISGUISED_TOP]: 'server.js' }, dependencies: { [BUNDLER]: '1.0.0' } },
      files: { 'server.js': '' },
    },
    {
      // A tarball that bundles a directory named for the scope, and an install script.
      name: BUNDLER, version: '1.0.0',
      manifest: { bundleDependencies: [`${SC}/bundled`], dependencies: { [`${SC}/bundled`]: '1.0.0' }, scripts: { install: 'node -e 0' } },
      files: { [`node_modules/${SC}/bundled/package.json`]: JSON.stringify({ name: `${SC}/bundled`, version: '1.0.0' }) },
    },
  ]);
  const scopedAddons = await startPackageRegistry([
    probePackage(`${SC}/addon`, { scope: SC, scopedOther: `${SC}/other`, unusedScope: UNUSED, defaultName: `e2e-reg-plain-${id}`, token: TOKEN }),
    { name: `${SC}/other`, version: '1.0.0', files: { 'index.js': '' } },
  ]);
  const tlsAddons = await startPackageRegistry([
    probePackage(`${TLS}/addon`, { scope: TLS, scopedOther: `${TLS}/other`, token: TOKEN, nodeFetch: true }),
    { name: `${TLS}/other`, version: '1.0.0', files: { 'index.js': '' } },
  ], { tls: certs, host: 'localhost' });
  registries.push(def, scopedAddons, tlsAddons);
  const port = (r) => new URL(r.url).port;
  writeReadableFile(path.join(home, '.npmrc'), [
    `registry=${def.url}`,
    `${SC}:registry=${scopedAddons.url}`,
    `${TLS}:registry=${tlsAddons.url}`,
    `${UNUSED}:registry=http://127.0.0.1:1/`,
    `//127.0.0.1:${port(def)}/:_authToken=${TOKEN}`,
    `//127.0.0.1:${port(scopedAddons)}/:_authToken=${TOKEN}`,
    `//localhost:${port(tlsAddons)}/:_authToken=${TOKEN}`,
    `cafile=${certs.ca}`,
    'fetch-retries=0',
    '',
  ].join('\n'));
  proxy = await startForwardProxy();
});

after(async () => {
  for (const r of registries) await r.close();
  proxy?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  removeTempDirs();
});

const reportOf = (top, pkg) => JSON.parse(readFileSync(path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`, 'node_modules', pkg, 'report.json'), 'utf8'));

test('a scoped package\'s install script reaches its scope\'s registry, the default one, and no token', { timeout: 240_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const [def, scoped] = registries;
  const audit = path.join(home, 'audit.jsonl');
  // `run` installs too, with an audit log: the token must be in neither it nor stderr.
  const r = await runMcpcell(['run', '--audit-log', audit, '--npm-scope', SC, `npx://${TOP}@1.0.0`], { env: scriptsEnv(home), input: '', guardMs: 220_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stderr.includes(`network only to the npm registries ${def.url.replace(/\/$/, '')} and ${scoped.url.replace(/\/$/, '')};`), r.stderr);
  const report = reportOf(TOP, `${SC}/addon`);
  t.diagnostic(`probe report: ${JSON.stringify(report)}`);
  assert.equal(report.view_scoped, `ok "${SC}/other"`, 'npm in the cell asks the scope\'s registry');
  assert.equal(report.view_default, `ok "e2e-reg-plain-${id}"`, 'and the default one');
  assert.equal(report.config_scoped, `ok ${scoped.url}`);
  // A configured scope no installed package has: npm asks its own registry
  // (not opened: denied), never the default registry in its place.
  assert.match(report.view_unused_scope, /^error /);
  assert.ok(!def.requests.some((q) => q.includes(`unused${id}`)), `asked the default registry for ${UNUSED}: ${def.requests}`);
  // No token anywhere in the cell, in what it sent, on stderr or in the audit log.
  assert.equal(report.env_has_token, false);
  assert.equal(report.npmrc_has_token, false, report.npmrc);
  assert.ok(!report.npmrc.includes('_auth'), report.npmrc);
  const fromCell = scoped.authorizations.filter(([u]) => u.includes('other'));
  assert.ok(fromCell.length > 0, 'the script\'s npm asked the scoped registry');
  assert.deepEqual(fromCell.filter(([, a]) => a !== null), [], 'the cell\'s requests carry no Authorization');
  assert.ok(scoped.authorizations.some(([, a]) => a === `Bearer ${TOKEN}`), 'the host\'s npm did use the token (so it was there to leak)');
  assert.ok(!r.stderr.includes(TOKEN), 'no token on stderr');
  assert.ok(existsSync(audit), 'the audit log was written');
  assert.ok(!readFileSync(audit, 'utf8').includes(TOKEN), 'no token in the audit log');
  // The npmrc written for the cells is not left in the published install.
  assert.ok(!existsSync(path.join(home, '.cache', 'mcpcell', 'npx', `${TOP}@1.0.0`, '.mcpcell-script-npmrc')));
});

test('a scope\'s registry is not opened by a bundled directory named for the scope (npm\'s real lockfile)', { timeout: 240_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const [def] = registries;
  const r = await runMcpcell(['install', `npx://${DISGUISED_TOP}@1.0.0`], { env: scriptsEnv(home), guardMs: 220_000 });
  assert.equal(r.code, 0, r.stderr);
  const nm = path.join(home, '.cache', 'mcpcell', 'npx', `${DISGUISED_TOP}@1.0.0`, 'node_modules');
  assert.ok(existsSync(path.join(nm, BUNDLER, 'node_modules', SC, 'bundled', 'package.json')), 'the bundled directory');
  assert.ok(r.stderr.includes(`running the install scripts of ${BUNDLER} (install)`), r.stderr);
  assert.ok(r.stderr.includes(`network only to the npm registry ${def.url.replace(/\/$/, '')};`), r.stderr);
});

test('a registry behind a private CA: npm\'s cafile is bound into the cell, for npm and for Node', { timeout: 240_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const tlsAddons = registries[2];
  const r = await runMcpcell(['install', '--npm-scope', TLS, `npx://${TLS_TOP}@1.0.0`], { env: scriptsEnv(home), guardMs: 220_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stderr.includes(`and https://localhost:${new URL(tlsAddons.url).port};`), r.stderr);
  const report = reportOf(TLS_TOP, `${TLS}/addon`);
  t.diagnostic(`probe report: ${JSON.stringify(report)}`);
  assert.equal(report.view_scoped, `ok "${TLS}/other"`, 'npm in the cell verified the registry with the cafile');
  assert.equal(report.node_https, 'ok 200', 'Node verified it with NODE_EXTRA_CA_CERTS');
  assert.equal(report.extra_ca, '/etc/mcpcell/npm-cafile.pem');
  assert.match(report.npmrc, /^cafile="\/etc\/mcpcell\/npm-cafile\.pem"$/m);
  assert.ok(!r.stderr.includes(TOKEN));
});

test('a registry the host\'s npm reaches through a proxy: not reached, said up front and in the failure, no password', { timeout: 300_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const px = await startPackageRegistry([
    { name: PX_OK, version: '1.0.0', manifest: { bin: { [PX_OK]: 'server.js' }, scripts: { install: 'node -e "require(\'fs\').writeFileSync(\'ran\', \'x\')"' } }, files: { 'server.js': '' } },
    { name: PX_NEEDS, version: '1.0.0', manifest: { bin: { [PX_NEEDS]: 'server.js' }, scripts: { install: `npm view ${PX_OK} name --fetch-retries=0` } }, files: { 'server.js': '' } },
  ]);
  registries.push(px);
  const pxHome = mkdtempSync('/var/tmp/e2e-regs-pxhome-');
  chmodSync(pxHome, 0o777);
  t.after(() => rmSync(pxHome, { recursive: true, force: true }));
  const proxyUrl = `http://127.0.0.1:${proxy.address().port}`;
  writeReadableFile(path.join(pxHome, '.npmrc'), `registry=${px.url}\nproxy=http://user:${PROXY_PASSWORD}@127.0.0.1:${proxy.address().port}/\nfetch-retries=0\n`);
  const env = scriptsEnv(pxHome);
  const ok = await runMcpcell(['install', `npx://${PX_OK}@1.0.0`], { env, guardMs: 220_000 });
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(proxied > 0, 'the host\'s npm went through the proxy');
  assert.ok(ok.stderr.includes(`the install scripts do not reach ${px.url.replace(/\/$/, '')} (npm's registry), which the host's npm reaches through npm config proxy (${proxyUrl})`), ok.stderr);
  assert.ok(existsSync(path.join(pxHome, '.cache', 'mcpcell', 'npx', `${PX_OK}@1.0.0`, 'node_modules', PX_OK, 'ran')), 'a script that needs no network still runs');
  const needs = await runMcpcell(['install', `npx://${PX_NEEDS}@1.0.0`], { env, guardMs: 220_000 });
  assert.notEqual(needs.code, 0, needs.stderr);
  t.diagnostic(needs.stderr.split('\n').filter((l) => l.includes('proxy')).join('\n'));
  assert.match(needs.stderr, new RegExp(`run the install scripts of ${PX_NEEDS}.*reached no network, not .*npm config proxy \\(${proxyUrl.replace(/\./g, '\\.')}\\)`, 's'));
  assert.match(needs.stderr, /--install-scripts=skip/);
  for (const r of [ok, needs]) assert.ok(!r.stderr.includes(PROXY_PASSWORD), 'the proxy\'s password is never shown');
});

test('HTTPS_PROXY in the environment: the registry is not reached, the variable named without its password; exempted by NO_PROXY, it is', { timeout: 300_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `e2e-reg-env-needs-${id}`;
  const px = await startPackageRegistry([
    { name: PX_OK, version: '1.0.0', files: { 'index.js': '' } },
    { name, version: '1.0.0', manifest: { bin: { [name]: 'server.js' }, scripts: { install: `npm view ${PX_OK} name --fetch-retries=0` } }, files: { 'server.js': '' } },
  ]);
  registries.push(px);
  const proxyUrl = `http://127.0.0.1:${proxy.address().port}`;
  const homeFor = () => {
    const h = mkdtempSync('/var/tmp/e2e-regs-envhome-');
    chmodSync(h, 0o777);
    t.after(() => rmSync(h, { recursive: true, force: true }));
    writeReadableFile(path.join(h, '.npmrc'), `registry=${px.url}\nfetch-retries=0\n`);
    return h;
  };
  const withProxy = (h, extra = {}) => ({ ...scriptsEnv(h), HTTPS_PROXY: `http://user:${PROXY_PASSWORD}@127.0.0.1:${proxy.address().port}/`, ...extra });
  const before = proxied;
  const closed = await runMcpcell(['install', `npx://${name}@1.0.0`], { env: withProxy(homeFor()), guardMs: 220_000 });
  assert.notEqual(closed.code, 0, closed.stderr);
  assert.ok(proxied > before, 'the host\'s npm went through the proxy');
  assert.ok(closed.stderr.includes(`which the host's npm reaches through environment variable HTTPS_PROXY (${proxyUrl})`), closed.stderr);
  assert.ok(!closed.stderr.includes(PROXY_PASSWORD), 'the proxy\'s password is never shown');
  // Exempted by NO_PROXY, npm goes direct: so does the cell, through the egress proxy.
  const direct = await runMcpcell(['install', `npx://${name}@1.0.0`], { env: withProxy(homeFor(), { NO_PROXY: '127.0.0.1' }), guardMs: 220_000 });
  assert.equal(direct.code, 0, direct.stderr);
  assert.ok(direct.stderr.includes(`network only to the npm registry ${px.url.replace(/\/$/, '')};`), direct.stderr);
  assert.ok(!direct.stderr.includes('do not reach'), direct.stderr);
  assert.ok(!direct.stderr.includes(PROXY_PASSWORD));
});
