// Adversary pass adv14 (session 14): the allow-run check of npm's TLS
// settings (src/source/public_npm.cc WhyNpmConfigIsNotPublic) looks at
// strict-ssl, ca and cafile; Node's own NODE_EXTRA_CA_CERTS is not looked at
// and is passed to the host npm (src/source/host_tool.cc HostToolEnvironment).
// On this machine the global npmrc names a cafile (npm's explicit CA list
// makes Node ignore NODE_EXTRA_CA_CERTS), but a user npmrc's `cafile=`
// (empty) unsets it, and the check reads an empty cafile as "none".
//
// (A userconfig `cafile=` to unset it makes npm 11 exit 235: held.)
//
// Finding:
//   medium HTTPS_PROXY + NODE_EXTRA_CA_CERTS is accepted on an allow run. On
//          a machine whose npm names no cafile (Node's official builds: no
//          global npmrc) Node adds the CA to its store, and a proxy answers
//          for registry.npmjs.org: the trusted npx:// package is the proxy's,
//          run with no cell. Here the global cafile masks it; the test shows
//          the setting accepted.
//   high   the after-install check reads package-lock.json's `resolved`,
//          where npm asked, not who answered: an isolated run through a
//          MITM proxy with strict-ssl off (refused on allow runs only)
//          records https://registry.npmjs.org/ URLs for the proxy's package,
//          and a later clean allow run runs it with no cell.
//   high   IsSystemFile accepts any root-owned file under /usr as npm's
//          cafile, and packages ship test CAs with their private keys there
//          (google-cloud-sdk's urllib3 dummyserver: cacert.pem + cacert.key,
//          CA:TRUE, valid to 2038). npm_config_cafile=that CA + HTTPS_PROXY:
//          the proxy signs registry.npmjs.org with the public key and its
//          package runs with no cell.
//   high   the proxy's answers (packument and tarball, `cache-control:
//          max-age` a year) stay in mcpcell's npm cache (npx/.npm-cache)
//          under registry.npmjs.org's key: with the entry removed, as the
//          refusal advises, a clean allow run's own install is a cache hit
//          and runs the proxy's package with no cell.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { after, test } from 'node:test';

import { RUN_ID, accountEnv, cacheEntry, fakePublicNpxEntry, removeCacheEntries } from './lib/account_cache.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { connectProxy, markingTarball, mitmCertificate, mitmRegistry, npmjsDocument } from './lib/mitm.mjs';
import { policyRunner } from './lib/policy_run.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);
after(removeCacheEntries);

const ROOT = makeTempDir('adv14-mitm');
const ID = RUN_ID;
const env = (extra = {}) => accountEnv({ npm_config_update_notifier: 'false', npm_config_fetch_retries: '0', ...extra });
const { trusting } = policyRunner({ root: ROOT });

/** A CA of the test's and a certificate it signed for registry.npmjs.org. */
const npmjsCertificate = (dir) => mitmCertificate(dir, 'adv14 mitm ca', ['registry.npmjs.org']);

test('adv14: HTTPS_PROXY + NODE_EXTRA_CA_CERTS (a CA of the proxy\'s) are accepted on an allow run of npx://: where npm names no cafile, the proxy answers for registry.npmjs.org', {
  timeout: 60_000,
}, async () => {
  const dir = makeTempDir('adv14-mitm-ca');
  const cert = npmjsCertificate(dir);
  const name = `adv14-extraca-${ID}`;
  // A package installed earlier from the public registry (what `mcpcell install` leaves); its install record names npmjs.
  fakePublicNpxEntry(name, 'console.error("ADV14-EXTRA-CA-ACCEPTED");\n');
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
    { input: '', env: env({ HTTPS_PROXY: 'http://127.0.0.1:9', NODE_EXTRA_CA_CERTS: cert.ca }), guardMs: 30_000 });
  const control = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
    { input: '', env: env({ HTTPS_PROXY: 'http://127.0.0.1:9', npm_config_strict_ssl: 'false' }), guardMs: 30_000 });
  assert.match(control.stderr, /strict-ssl/, `control: strict-ssl=false is refused:\n${control.stderr}`);
  assert.doesNotMatch(r.stderr, /WITHOUT a cell/, `NODE_EXTRA_CA_CERTS=${cert.ca} with HTTPS_PROXY was accepted:\n${r.stderr}`);
});

test('adv14: an isolated run through a man in the middle (HTTPS_PROXY, strict-ssl off) records honest registry.npmjs.org URLs in package-lock.json; a later clean allow run runs the proxy\'s package with no cell', {
  timeout: 120_000,
}, async (t) => {
  const dir = makeTempDir('adv14-mitm-cache');
  const cert = npmjsCertificate(dir);
  const name = `adv14-mitm-cache-${ID}`;
  const entry = cacheEntry('npx', name);
  const proxy = await mitmRegistry(t, name, 'ADV14-MITM-CACHE-RAN', cert.tls);
  const a = await runMcpcell(['run', '--isolate', '--install-scripts=skip', `npx://${name}@1.0.0`],
    { input: '', env: env({ HTTPS_PROXY: proxy.url, npm_config_strict_ssl: 'false' }), guardMs: 55_000 });
  t.diagnostic(`isolated run: exit ${a.code}; CONNECTs ${proxy.connects.join(', ')}`);
  const r = await runMcpcell(['run', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`], { input: '', env: env(), guardMs: 30_000 });
  rmSync(entry, { recursive: true, force: true });
  assert.ok(!(/ADV14-MITM-CACHE-RAN/.test(r.stderr) && /WITHOUT a cell/.test(r.stderr)), `the proxy's package ran with no cell:\n${r.stderr}`);
});

/** A CA shipped under /usr with its private key beside it (public test fixtures). */
const PUBLIC_TEST_CAS = [
  ['/usr/lib/google-cloud-sdk/platform/gsutil/third_party/urllib3/dummyserver/certs/cacert.pem',
    '/usr/lib/google-cloud-sdk/platform/gsutil/third_party/urllib3/dummyserver/certs/cacert.key'],
].filter(([c, k]) => existsSync(c) && existsSync(k));

test('adv14: npm_config_cafile naming a test CA a package ships under /usr (its key beside it) passes as "the system\'s"; a proxy signs registry.npmjs.org with it and its package runs with no cell', {
  timeout: 90_000,
  skip: PUBLIC_TEST_CAS.length === 0 && 'no public test CA under /usr on this machine',
}, async (t) => {
  const [caPem, caKey] = PUBLIC_TEST_CAS[0];
  const dir = makeTempDir('adv14-testca');
  const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=registry.npmjs.org']);
  writeReadableFile(path.join(dir, 'san.ext'), 'subjectAltName=DNS:registry.npmjs.org\n');
  run(['x509', '-req', '-in', 'srv.csr', '-CA', caPem, '-CAkey', caKey, '-CAcreateserial', '-CAserial', path.join(dir, 'ca.srl'), '-out', 'srv.pem', '-days', '2', '-extfile', 'san.ext']);
  const name = `adv14-testca-${ID}`;
  const entry = cacheEntry('npx', name);
  const proxy = await mitmRegistry(t, name, 'ADV14-TEST-CA-RAN', { key: readFileSync(path.join(dir, 'srv.key')), cert: readFileSync(path.join(dir, 'srv.pem')) });
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
    { input: '', env: env({ HTTPS_PROXY: proxy.url, npm_config_cafile: caPem }), guardMs: 55_000 });
  rmSync(entry, { recursive: true, force: true });
  t.diagnostic(`cafile ${caPem}: exit ${r.code}; CONNECTs ${proxy.connects.join(', ')}`);
  assert.ok(!(/ADV14-TEST-CA-RAN/.test(r.stderr) && /WITHOUT a cell/.test(r.stderr)), `the proxy's package ran with no cell:\n${r.stderr}`);
});

/** An https registry (the test CA's registry.npmjs.org) whose answers say they keep for a year, behind a CONNECT proxy. */
async function cachingMitm(t, name, mark, tls) {
  const tarball = markingTarball('adv14-caching', name, mark);
  const year = { 'cache-control': 'public, max-age=31536000' };
  const front = https.createServer(tls, (q, r) => {
    if (q.url.endsWith('.tgz')) { r.writeHead(200, year); r.end(tarball.bytes); return; }
    r.writeHead(200, { 'content-type': 'application/json', ...year });
    r.end(JSON.stringify(npmjsDocument(tarball)));
  });
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  t.after(() => { front.close(); });
  return connectProxy(t, front.address().port);
}

test('adv14: the MITM\'d answers stay in mcpcell\'s npm cache (.npm-cache, max-age a year): with the cache entry removed, as the refusal advises, a clean allow run installs the proxy\'s package again and runs it with no cell', {
  timeout: 120_000,
}, async (t) => {
  const cert = npmjsCertificate(makeTempDir('adv14-npmcache-ca'));
  const name = `adv14-npmcache-${ID}`;
  const entry = cacheEntry('npx', name);
  const proxy = await cachingMitm(t, name, 'ADV14-NPM-CACHE-RAN', cert.tls);
  const a = await runMcpcell(['run', '--isolate', '--install-scripts=skip', `npx://${name}@1.0.0`],
    { input: '', env: env({ HTTPS_PROXY: proxy.url, npm_config_strict_ssl: 'false' }), guardMs: 55_000 });
  t.diagnostic(`isolated run through the proxy: exit ${a.code}`);
  rmSync(entry, { recursive: true, force: true });
  // No proxy now, strict-ssl on: the allow run's own install.
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`], { input: '', env: env(), guardMs: 55_000 });
  rmSync(entry, { recursive: true, force: true });
  t.diagnostic(r.stderr.slice(0, 600));
  assert.ok(!(/ADV14-NPM-CACHE-RAN/.test(r.stderr) && /WITHOUT a cell/.test(r.stderr)), `the proxy's package, from npm's cache, ran with no cell:\n${r.stderr}`);
});

test('adv14 held: HTTPS_PROXY + NODE_TLS_REJECT_UNAUTHORIZED=0 (Node\'s own switch) does not let a proxy with an unknown CA answer for registry.npmjs.org (npm sets rejectUnauthorized itself)', {
  timeout: 90_000,
}, async (t) => {
  const cert = npmjsCertificate(makeTempDir('adv14-tlsreject-ca'));
  const name = `adv14-tlsreject-${ID}`;
  const entry = cacheEntry('npx', name);
  const proxy = await mitmRegistry(t, name, 'ADV14-TLS-REJECT-RAN', cert.tls);
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
    { input: '', env: env({ HTTPS_PROXY: proxy.url, NODE_TLS_REJECT_UNAUTHORIZED: '0' }), guardMs: 55_000 });
  rmSync(entry, { recursive: true, force: true });
  t.diagnostic(`CONNECTs ${proxy.connects.join(', ')}`);
  assert.doesNotMatch(r.stderr, /ADV14-TLS-REJECT-RAN/, r.stderr);
});
