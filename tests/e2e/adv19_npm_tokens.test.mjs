// Adversary pass adv19: npm's config copies as sealed memfds
// (src/source/npmrc_snapshot.cc, util/sealed_memfd.cc, npx_install.cc
// ProjectConfigFile). The copies themselves held: no cell reaches them (cell
// init closes every inherited fd before anything of the cell runs; a cell's
// /proc is its own pid namespace's, so /proc/<host npm>/fd is not there;
// the project `.npmrc` link, followed in a cell, opens the cell's own fd N).
// But a registry token (a Gemfury-style token in the registry URL's path,
// which mcpcell supports and masks in npm's output) is written by npm itself
// into files the memfds do not cover, below ~/.cache/mcpcell/npx — the tree
// adv18 showed a cell granted `--read ~/.cache` (or `--read ~`) reads.
//
// Findings:
//   1. MEDIUM every published npx install keeps npm's lockfiles
//      (`package-lock.json`, `node_modules/.package-lock.json`), whose
//      `resolved` URLs hold the path token (npm_script_credentials.test.mjs
//      proves they do; script cells see them as /dev/null). They stay for
//      good in ~/.cache/mcpcell/npx/<pkg>@<ver>/, and any later cell of the
//      same user granted a read of ~/.cache or ~ (a filesystem server's
//      usual grant) reads the token; nothing masks them there (the
//      credential scan masks names like `.npmrc`, not package-lock.json).
//      Reproduce: as a normal user, install npx://x@1.0.0 from
//      `registry=http://127.0.0.1:P/TOKEN/`; then `mcpcell run --isolate
//      --read ~/.cache -- sh -c 'cat ~/.cache/mcpcell/npx/*/package-lock.json'`.
//      Suggested fix: rewrite (or strip) `resolved` in both lockfiles after
//      the install once the provenance check has what it needs (keep the
//      origin, mask the path: install_origin.cc reads only the origin), or
//      keep the lockfiles outside the published tree (the origin record
//      beside it); and mask ~/.cache/mcpcell in every cell's grants (no cell
//      needs mcpcell's cache but its own package, which is mounted on its own).
//   2. HIGH the npx server's own cell reads them too, no grant needed: the
//      install directory is the server's, its lockfiles included, so the
//      server (and every dependency's code it loads, which may have the
//      network) reads the user's token for the private registry. The script
//      cells see both lockfiles as /dev/null for exactly this reason
//      (script_cell.cc HideLockfiles: "such a registry is given to no
//      cell"), the server's cell does not.
//      Reproduce: `registry=http://127.0.0.1:P/TOKEN/`; `mcpcell run
//      npx://x@1.0.0` whose server.js prints ../../package-lock.json.
//      Suggested fix: the same masks in the server's cell (/dev/null over
//      both lockfiles when a registry holds a token), or strip `resolved`
//      from the published lockfiles (finding 1's fix covers both).
//   3. (same root, shorter window) while an install runs, npm's per-launch
//      cache (`.npmrc-PID-X/cache/index-v5`) keys every request by its URL,
//      path token included; the same grant reads it (not kept as a separate
//      test: the lockfile is the persistent case).
// Held (read, not kept as tests): no token in npm's argv
// (`--userconfig=/proc/self/fd/N`); the memfds are CLOEXEC in mcpcell and
// cleared only in npm's child (fork, then fcntl; cell init close_range's
// every inherited fd before the cell runs anything); npm --ignore-scripts
// with --allow-git=none spawns no child that would inherit them; a sealed
// memfd cannot be rewritten by npm. Noted: a scope redirected to a
// path-token registry puts that URL in npm's environment
// (install_scopes.cc Env: npm_config_@scope:registry=URL), readable in
// /proc/PID/environ by the user's own host processes only, which read
// ~/.npmrc anyway.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { startPackageRegistry } from './lib/npm_registry.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const TEST_UID = 1001; // mcpcell-test
const TEST_GID = 1001;
const id = randomBytes(4).toString('hex');
const homes = [];
after(() => { for (const h of homes) rmSync(h, { recursive: true, force: true }); });
after(removeTempDirs);

/** mcpcell as mcpcell-test (when we are root), collecting stdout/stderr. */
function mcpcellAsUser(args, env, guardMs) {
  const asRoot = process.getuid() === 0;
  const child = spawn(MCPCELL_BIN, args, {
    env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], ...(asRoot ? { uid: TEST_UID, gid: TEST_GID } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), guardMs);
    child.on('close', (code) => { clearTimeout(guard); resolve({ code, stdout, stderr }); });
  });
}

/** A front serving the registry on regPort() below /<token>/ (Gemfury style). */
async function startTokenFront(regPort, token) {
  const server = http.createServer((req, res) => {
    const inner = req.url.startsWith(`/${token}/`) ? req.url.slice(token.length + 1) : req.url;
    const up = http.request({ host: '127.0.0.1', port: regPort(), path: inner, method: req.method,
      headers: { ...req.headers, host: `127.0.0.1:${regPort()}`, 'accept-encoding': 'identity' } }, (r) => {
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
  const front = { url: `http://127.0.0.1:${server.address().port}/${token}/`, close: () => new Promise((r) => server.close(() => r())) };
  return front;
}

test('adv19: a cell granted a read of ~/.cache reads a path-token registry\'s token from a published install\'s lockfile', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const home = mkdtempSync('/var/tmp/e2e-adv19-tokens-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const token = `Tk${randomBytes(12).toString('hex')}9`;
  const top = `e2e-adv19-lock-${id}`;
  let reg;
  const front = await startTokenFront(() => reg.port, token);
  t.after(() => front.close());
  reg = await startPackageRegistry([{
    name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' } }, files: { 'server.js': '#!/usr/bin/env node\n' },
  }]);
  t.after(() => reg.close());
  const rc = path.join(home, '.npmrc');
  writeFileSync(rc, `registry=${front.url}\nfetch-retries=0\n`, { mode: 0o600 });
  chownSync(rc, TEST_UID, TEST_GID);
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', npm_config_update_notifier: 'false' };

  const installed = await mcpcellAsUser(['install', `npx://${top}@1.0.0`], env, 90_000);
  assert.equal(installed.code, 0, `install (test setup): ${installed.stderr.slice(-800)}`);

  // Later, another server, in a cell, granted a read of the cache (or of ~).
  const npx = path.join(home, '.cache', 'mcpcell', 'npx');
  const r = await mcpcellAsUser(['run', '--isolate', '--relay=off', '--read', path.join(home, '.cache'), '--', '/bin/sh', '-c',
    `find ${npx} -name '*package-lock.json' -exec cat {} + 2>/dev/null | base64 -w0`], env, 30_000);
  const seen = Buffer.from(r.stdout.trim(), 'base64').toString('utf8');
  t.diagnostic(`reader exit ${r.code}; read ${seen.length} bytes\n${r.stderr.slice(-400)}`);
  assert.ok(seen.length > 0 || r.code !== 0, 'the reader read nothing (its grant was refused?)');
  assert.ok(!seen.includes(token), 'a cell read the user\'s registry token from an installed package\'s lockfile');
});

test('adv19: the npx server\'s own cell reads the user\'s path token from its install\'s lockfile', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const home = mkdtempSync('/var/tmp/e2e-adv19-tokens-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const token = `Tk${randomBytes(12).toString('hex')}9`;
  const top = `e2e-adv19-self-${id}`;
  let reg;
  const front = await startTokenFront(() => reg.port, token);
  t.after(() => front.close());
  // The server prints every lockfile it can find above its own directory.
  const server = `#!/usr/bin/env node
const fs = require('fs'); const path = require('path'); let out = '';
for (const rel of ['../../package-lock.json', '../.package-lock.json']) {
  try { out += fs.readFileSync(path.join(__dirname, rel), 'utf8'); } catch (e) { out += 'error ' + e.code + '\\n'; }
}
process.stdout.write(Buffer.from(out).toString('base64') + '\\n');
`;
  reg = await startPackageRegistry([{
    name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' } }, files: { 'server.js': server }, exec: ['server.js'],
  }]);
  t.after(() => reg.close());
  const rc = path.join(home, '.npmrc');
  writeFileSync(rc, `registry=${front.url}\nfetch-retries=0\n`, { mode: 0o600 });
  chownSync(rc, TEST_UID, TEST_GID);
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', npm_config_update_notifier: 'false' };
  const r = await mcpcellAsUser(['run', '--isolate', '--relay=off', `npx://${top}@1.0.0`], env, 90_000);
  const seen = Buffer.from(r.stdout.trim(), 'base64').toString('utf8');
  t.diagnostic(`exit ${r.code}; read: ${JSON.stringify(seen.slice(0, 300))}\n${r.stderr.slice(-400)}`);
  assert.match(seen, /lockfileVersion|error /, `the server did not run (test setup): ${r.stderr.slice(-800)}`);
  assert.ok(!seen.includes(token), 'the server read the user\'s registry token from its install\'s lockfile');
});
