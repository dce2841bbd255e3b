// Adversary pass adv15 (session 15): adv14's --prefer-online on mcpcell's npm
// installs (src/source/npx_install.cc), meant to stop a man in the middle's
// answers, left in mcpcell's npm cache (<npx cache>/.npm-cache) by an
// isolated run, from being installed again by a clean allow run.
//
// Finding:
//   high   npm's `offline` and `prefer-offline` settings beat
//          `--prefer-online` (npm-registry-fetch getCacheMode: offline →
//          only-if-cached, preferOffline → force-cache, before preferOnline is
//          looked at), and neither is judged by WhyNpmConfigIsNotPublic: an
//          allow run's env block with npm_config_prefer_offline=true (or
//          npm_config_offline=true, or the same in any npmrc) installs the
//          cached packument and tarball without asking the registry. An
//          isolated run through the attacker's proxy (HTTPS_PROXY +
//          strict-ssl=false: fine in a cell) stored them under
//          https://registry.npmjs.org/...; the user removes the refused entry
//          as told; the clean allow run (+ prefer-offline) installs the
//          attacker's package under "public" settings — record public,
//          lockfile registry.npmjs.org — and runs it with NO cell.
//          Fix: pass --offline=false --prefer-offline=false (flags beat
//          every npmrc/env) with --prefer-online, and better, do not share
//          npm's cache between installs made under different settings
//          (adv15_npm_cache_revalidate.test.mjs: a 304 does the same).
// Held (normal test): the same without prefer-offline (adv14's fix).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ROOT = makeTempDir('adv15-offline');
const ID = `${process.pid}${Date.now() % 100000}`;
const env = (extra = {}) => ({
  PATH: '/usr/local/bin:/usr/bin:/bin', HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false', npm_config_fetch_retries: '0', ...extra,
});
const cleanup = [];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function trusting(source) {
  const p = path.join(ROOT, `policy-${source.replace(/\W/g, '_')}.json`);
  writeReadableFile(p, JSON.stringify({ trusted_sources: [source], rules: [{ name: 'trusted', condition: { not: 'untrusted_source' }, action: 'allow' }] }));
  return p;
}

function npmjsCertificate(dir) {
  const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=adv15 mitm ca']);
  run(['req', ...ec, '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=registry.npmjs.org']);
  writeReadableFile(path.join(dir, 'san.ext'), 'subjectAltName=DNS:registry.npmjs.org\n');
  run(['x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.pem', '-days', '2', '-extfile', 'san.ext']);
  chmodSync(path.join(dir, 'ca.pem'), 0o644);
  return { key: readFileSync(path.join(dir, 'srv.key')), cert: readFileSync(path.join(dir, 'srv.pem')) };
}

/** A fake registry.npmjs.org behind a CONNECT proxy (adv14's cachingMitm). */
async function mitm(t, name, mark, tls) {
  const dir = makeTempDir('adv15-mitm-pkg');
  mkdirSync(path.join(dir, 'package'));
  const manifest = { name, version: '1.0.0', license: 'MIT', bin: { srv: 'index.js' } };
  writeReadableFile(path.join(dir, 'package', 'package.json'), JSON.stringify(manifest));
  writeReadableFile(path.join(dir, 'package', 'index.js'), `#!/usr/bin/env node\nconsole.error(${JSON.stringify(mark)});\n`);
  execFileSync('tar', ['-czf', path.join(dir, 'p.tgz'), '-C', dir, 'package']);
  const bytes = readFileSync(path.join(dir, 'p.tgz'));
  const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
  const requests = [];
  const front = https.createServer(tls, (q, r) => {
    requests.push(q.url);
    if (q.url.endsWith('.tgz')) { r.writeHead(200); r.end(bytes); return; }
    r.writeHead(200, { 'content-type': 'application/json' });
    r.end(JSON.stringify({ name, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { ...manifest,
      dist: { tarball: `https://registry.npmjs.org/${name}/-/${name}-1.0.0.tgz`, integrity } } } }));
  });
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  const proxy = http.createServer((_q, s) => { s.writeHead(400); s.end(); });
  proxy.on('connect', (req, sock, head) => {
    const up = net.connect(front.address().port, '127.0.0.1', () => {
      sock.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      sock.pipe(up);
      up.pipe(sock);
    });
    up.on('error', () => sock.destroy());
    sock.on('error', () => up.destroy());
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => { proxy.close(); front.close(); });
  return { url: `http://127.0.0.1:${proxy.address().port}`, requests };
}

async function plantThenAllow(t, tag, allowEnv) {
  const name = `adv15-offline-${tag}-${ID}`;
  const mark = `ADV15-OFFLINE-${tag.toUpperCase()}-RAN`;
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  cleanup.push(entry);
  const proxy = await mitm(t, name, mark, npmjsCertificate(makeTempDir('adv15-offline-ca')));
  // 1. An isolated run (another server's env block) through the attacker's proxy.
  const a = await runMcpcell(['run', '--isolate', '--install-scripts=skip', `npx://${name}@1.0.0`],
    { input: '', env: env({ HTTPS_PROXY: proxy.url, npm_config_strict_ssl: 'false' }), guardMs: 55_000 });
  t.diagnostic(`isolated run through the proxy: exit ${a.code}; proxy served ${proxy.requests.join(', ')}`);
  // 2. The user removes the refused entry, as the allow run's refusal says.
  rmSync(entry, { recursive: true, force: true });
  // 3. The allow run: no proxy, strict-ssl on, the public registry.
  const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
    { input: '', env: env(allowEnv), guardMs: 55_000 });
  let origin = '(none)';
  try { origin = readFileSync(path.join(entry, '.mcpcell-origin.json'), 'utf8').trim(); } catch {}
  rmSync(entry, { recursive: true, force: true });
  t.diagnostic(`allow run: exit ${r.code}; origin ${origin}\n${r.stderr.slice(0, 900)}`);
  return new RegExp(mark).test(r.stderr) && /WITHOUT a cell/.test(r.stderr) ? r.stderr : '';
}

test('adv15: npm_config_prefer_offline=true on an allow run beats --prefer-online: the proxy\'s cached package is installed as public and runs with NO cell', {
  timeout: 150_000,
}, async (t) => {
  assert.equal(await plantThenAllow(t, 'prefer', { npm_config_prefer_offline: 'true' }), '');
});

test('adv15: npm_config_offline=true, the same', {
  timeout: 150_000,
}, async (t) => {
  assert.equal(await plantThenAllow(t, 'offline', { npm_config_offline: 'true' }), '');
});

test('adv15 held: without those settings --prefer-online asks the registry (adv14\'s fix holds against a max-age-less plant)', { timeout: 150_000 }, async (t) => {
  assert.equal(await plantThenAllow(t, 'online', {}), '');
});
