// Adversary pass adv15 (session 15): `--prefer-online` on mcpcell's npm
// installs (src/source/npx_install.cc), which adv14 added so that a man in
// the middle's answers left in mcpcell's npm cache (<npx cache>/.npm-cache,
// shared by EVERY install: isolated runs under any settings, `mcpcell
// install`, allow runs) are not served to a later clean install.
//
// Finding:
//   high   --prefer-online revalidates; it does not refetch. npm sends the
//          cached entry's ETag (If-None-Match) and takes a 304 as "the cached
//          body is current": the packument AND the tarball stored by an
//          earlier install are used as they are. An attacker who answered an
//          earlier install (an isolated run with its env block's HTTPS_PROXY +
//          NODE_EXTRA_CA_CERTS, or strict-ssl=false: accepted on isolated
//          runs) stores its packument and tarball under
//          https://registry.npmjs.org/... with the ETags the real registry
//          currently gives for them (anyone can read them). When the user
//          removes the entry (as the allow run's refusal tells them to) and
//          the clean allow run installs again, the real registry answers 304
//          to both conditional requests and npm installs the attacker's
//          package; the record is written under public settings ("public":
//          true), package-lock.json says registry.npmjs.org, and it runs with
//          NO cell. (registry.npmjs.org answers such revalidations with 304:
//          npm's "GET 304 ... (cache revalidated)" log line.)
//          Shown here with mcpcell's own install (its flags, its cache) and a
//          local registry that behaves as the real one does: the second
//          install, whose registry serves other content, gets the first
//          install's package. This machine's registry.npmjs.org is a mirror
//          without ETags, so the allow-run half cannot be run here.
//          Fix: never let an install that may be trusted share npm's cache
//          with one that may not: give each install a fresh cache (e.g. under
//          its .install-* directory) or key the cache by the settings
//          (one cache for installs whose record is public, written only by
//          them), or pass --prefer-online AND a cache npm cannot revalidate
//          from (npm's `--cache` in a new empty directory).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const ACCOUNT_HOME = os.userInfo().homedir;
const ACCOUNT_CACHE = path.join(ACCOUNT_HOME, '.cache', 'mcpcell');
const ID = `${process.pid}${Date.now() % 100000}`;
const env = (extra = {}) => ({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: ACCOUNT_HOME, LANG: 'C.UTF-8', npm_config_update_notifier: 'false', npm_config_fetch_retries: '0', ...extra });
const cleanup = [];
after(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function tarball(name, mark) {
  const d = makeTempDir('adv15-reval-pkg');
  mkdirSync(path.join(d, 'package'));
  writeFileSync(path.join(d, 'package', 'package.json'), JSON.stringify({ name, version: '1.0.0', license: 'MIT', bin: { srv: 'index.js' } }));
  writeFileSync(path.join(d, 'package', 'index.js'), `#!/usr/bin/env node\nconsole.error(${JSON.stringify(mark)});\n`);
  execFileSync('tar', ['-czf', path.join(d, 'p.tgz'), '-C', d, 'package']);
  return readFileSync(path.join(d, 'p.tgz'));
}

test('adv15: --prefer-online takes a 304 for the cached packument and tarball: what an earlier install\'s registry (a man in the middle) stored is what a later install gets', {
  timeout: 150_000,
}, async (t) => {
  const name = `adv15-reval-${ID}`;
  const planted = tarball(name, 'ADV15-PLANTED-PACKAGE');
  const real = tarball(name, 'ADV15-REAL-PACKAGE');
  const integrity = (b) => `sha512-${createHash('sha512').update(b).digest('base64')}`;
  let phase = 'mitm';
  const requests = [];
  const server = http.createServer((q, r) => {
    requests.push(`${phase} ${q.url} if-none-match=${q.headers['if-none-match'] ?? '-'}`);
    const tgz = q.url.endsWith('.tgz');
    // The real registry's current ETags, which the man in the middle copied.
    const etag = tgz ? '"real-tarball-etag"' : '"real-packument-etag"';
    if (phase === 'real' && q.headers['if-none-match'] === etag) { r.writeHead(304, { etag }); r.end(); return; }
    const bytes = phase === 'mitm' ? planted : real;
    if (tgz) { r.writeHead(200, { etag }); r.end(bytes); return; }
    if (decodeURIComponent(q.url.slice(1)) !== name) { r.writeHead(404); r.end('{}'); return; }
    r.writeHead(200, { 'content-type': 'application/json', etag });
    const port = server.address().port;
    r.end(JSON.stringify({ name, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name, version: '1.0.0', bin: { srv: 'index.js' },
      dist: { tarball: `http://127.0.0.1:${port}/${name}/-/${name}-1.0.0.tgz`, integrity: integrity(bytes) } } } }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const registry = `http://127.0.0.1:${server.address().port}/`;
  const entry = path.join(ACCOUNT_CACHE, 'npx', `${name}@1.0.0`);
  cleanup.push(entry);

  // 1. The man in the middle answers an install (an isolated run).
  const a = await runMcpcell(['install', '--install-scripts=skip', `npx://${name}@1.0.0`], { input: '', env: env({ npm_config_registry: registry }), guardMs: 60_000 });
  t.diagnostic(`install 1: exit ${a.code}`);
  const first = readFileSync(path.join(entry, 'node_modules', name, 'index.js'), 'utf8');
  assert.match(first, /ADV15-PLANTED-PACKAGE/);
  // 2. The user removes the entry, as a refusal tells them to; the next
  //    install asks a registry that now serves its own package.
  rmSync(entry, { recursive: true, force: true });
  phase = 'real';
  const b = await runMcpcell(['install', '--install-scripts=skip', `npx://${name}@1.0.0`], { input: '', env: env({ npm_config_registry: registry }), guardMs: 60_000 });
  t.diagnostic(`install 2: exit ${b.code}; requests: ${requests.join('; ')}`);
  t.diagnostic(b.stderr);
  const second = readFileSync(path.join(entry, 'node_modules', name, 'index.js'), 'utf8');
  rmSync(entry, { recursive: true, force: true });
  assert.doesNotMatch(second, /ADV15-PLANTED-PACKAGE/, 'the second install got the first registry\'s package from npm\'s cache (304)');
  assert.match(second, /ADV15-REAL-PACKAGE/);
});
