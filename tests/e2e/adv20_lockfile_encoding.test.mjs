// Adversary pass adv20: source/lockfile_scrub.cc ScrubLockfiles (adv19 fix:
// a registry's path token, TokenPieces of the registry URLs, is replaced in
// package-lock.json and node_modules/.package-lock.json after npm install).
//
// Held (kept as passing tests): the scrub looks for the token as written
// in the user's npmrc (decoded, plus the percent-encoded path segment as
// written), byte for byte, while npm's `resolved` is the registry's own
// dist.tarball spelling. A registry spelling the token otherwise (npmrc raw
// `/AbCd+Ij=/`, tarballs under `/AbCd%2BIj%3D/`; or `%2b` against `%2B`)
// would leave it in the lockfiles, but npm refuses such a tarball:
// mcpcell's --allow-remote=none makes any tarball URL not below the
// registry URL as written a "remote" fetch (EALLOWREMOTE), so the install
// fails and nothing is published. The tests pin that: either the install
// fails, or no spelling of the token is in the published lockfiles. (Should
// --allow-remote=none ever go, the scrub must compare in one canonical form:
// percent-decode each URL segment before searching for the decoded pieces.)
// Also read, held: a lockfile made a symlink/FIFO is refused (O_NOFOLLOW,
// O_NONBLOCK, S_ISREG), the rewrite is O_EXCL beside it and renamed over;
// the scrub runs before any script cell or the server's cell exists.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * A front serving the registry on regPort() below /<token>/, whichever way
 * the client spells it; its packuments name tarballs below /<served>/ (the
 * registry's own spelling of the token).
 */
async function startTokenFront(regPort, spellings, served) {
  const front = {};
  const server = http.createServer((req, res) => {
    let inner = req.url;
    for (const s of spellings) if (req.url.startsWith(`/${s}/`)) inner = req.url.slice(s.length + 1);
    const up = http.request({ host: '127.0.0.1', port: regPort(), path: inner, method: req.method,
      headers: { ...req.headers, host: `127.0.0.1:${regPort()}`, 'accept-encoding': 'identity' } }, (r) => {
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => {
        let body = Buffer.concat(chunks);
        if (String(r.headers['content-type']).includes('json')) {
          body = Buffer.from(body.toString('utf8').replaceAll(`http://127.0.0.1:${regPort()}/`, `${front.origin}/${served}/`));
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
  front.origin = `http://127.0.0.1:${server.address().port}`;
  front.close = () => new Promise((r) => server.close(() => r()));
  return front;
}

async function installWith(t, written, served, spellings, label) {
  const home = mkdtempSync('/var/tmp/e2e-adv20-lock-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const top = `e2e-adv20-${label}-${id}`;
  let reg;
  const front = await startTokenFront(() => reg.port, spellings, served);
  t.after(() => front.close());
  reg = await startPackageRegistry([{
    name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' } }, files: { 'server.js': '#!/usr/bin/env node\n' },
  }]);
  t.after(() => reg.close());
  const rc = path.join(home, '.npmrc');
  writeFileSync(rc, `registry=${front.origin}/${written}/\nfetch-retries=0\n`, { mode: 0o600 });
  chownSync(rc, TEST_UID, TEST_GID);
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', npm_config_update_notifier: 'false' };
  const installed = await mcpcellAsUser(['install', `npx://${top}@1.0.0`], env, 90_000);
  if (installed.code !== 0) {
    t.diagnostic(`install refused: ${installed.stderr.split('\n').filter((l) => l.includes('npm error')).join(' | ')}`);
    assert.doesNotMatch(installed.stderr, new RegExp(TOKEN.replace(/[+=]/g, '\\$&')), 'the token was printed');
    return '';
  }
  const dir = path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`);
  let text = '';
  for (const rel of ['package-lock.json', 'node_modules/.package-lock.json']) {
    if (existsSync(path.join(dir, rel))) text += readFileSync(path.join(dir, rel), 'utf8');
  }
  assert.match(text, /lockfileVersion/, 'the install has its lockfiles (test setup)');
  t.diagnostic('installed');
  return text;
}

// Digits, upper and lower case (TokenShaped), with base64's + and =.
const TOKEN = `Tk${randomBytes(9).toString('hex')}Q9+Zx=`;

test('adv20: a path token written raw in the npmrc and percent-encoded by the registry is refused or scrubbed from the lockfiles (held)', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const encoded = encodeURIComponent(TOKEN);
  const text = await installWith(t, TOKEN, encoded, [TOKEN, encoded], 'enc');
  const line = text.split('\n').find((l) => l.includes('"resolved"')) ?? '';
  t.diagnostic(`resolved: ${line.trim()}`);
  assert.ok(!text.includes(encoded) && !decodeURIComponent(text.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')).includes(TOKEN),
    'the registry token (percent-encoded as the registry spells it) is in the published lockfile');
});

test('adv20: a path token percent-encoded in lower case in the npmrc and in upper case by the registry is refused or scrubbed (held)', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const upper = encodeURIComponent(TOKEN);
  const lower = upper.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  const text = await installWith(t, lower, upper, [lower, upper], 'case');
  const line = text.split('\n').find((l) => l.includes('"resolved"')) ?? '';
  t.diagnostic(`resolved: ${line.trim()}`);
  assert.ok(!text.toLowerCase().includes(lower.toLowerCase()),
    'the registry token (the registry\'s upper-case percent-encoding) is in the published lockfile');
});

test('adv20: a path token spelled by the registry as in the npmrc is scrubbed (held)', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const encoded = encodeURIComponent(TOKEN);
  const text = await installWith(t, encoded, encoded, [encoded], 'same');
  assert.ok(!text.includes(encoded) && !text.includes(TOKEN), 'the token spelled as in the npmrc was scrubbed');
});
