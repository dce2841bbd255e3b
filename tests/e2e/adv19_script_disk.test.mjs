// Adversary pass adv19: the install scripts' disk budget as session 13 made
// it (src/cell/script_cell.cc OverDiskBudget: the filesystem's statvfs count,
// bytes and inodes in use, against a baseline taken when the install's first
// script cell starts; 1 GiB / 250,000 inodes for all the install's cells).
//
// Findings:
//   1. MEDIUM the budget counts the disk's *net* change, so whatever the
//      tarballs put on the disk before the baseline is credit a script can
//      spend: npm (on the host, before any cell) extracts a tarball of any
//      unpacked size, and a script that deletes what its own tarball shipped
//      may write that much more. A 700 MiB file of zeros is ~700 KiB of
//      gzip; the script removes it and writes 1.6 GiB (two 800 MiB files,
//      under RLIMIT_FSIZE), the net growth (0.9 GiB) stays under 1 GiB, the
//      install succeeds and is published with 1.6 GiB its script wrote.
//      THREAT_MODEL says "another writer to it can stop a cell early, never
//      let one go on": a writer that frees space does let one go on, and the
//      script is such a writer (its package directory holds the tarball's
//      files, which it may delete).
//      The same credit comes from any other writer that frees space while
//      the install's scripts run: another launch's failed install (removed
//      by mcpcell, up to 1 GiB of its own scripts' writes) or npm cache
//      removals of concurrent launches (MCP clients start their servers
//      together) — the count is the disk's, so every deletion on it is the
//      script's to spend.
//      Reproduce: a package whose tarball holds pad.bin (700 MiB of zeros)
//      and `install: rm pad.bin && head -c 800M /dev/zero > a && head -c
//      800M /dev/zero > b`.
//      Suggested fix: never let the count go down: take the budget against
//      the highest of (baseline, the smallest use seen so far) — i.e. track
//      min(use) since the baseline and stop at use > min + budget — or,
//      better, measure the package directory's own growth on a store that
//      cannot be credited (a per-install project quota, a size-bounded
//      loop/overlay upper for the package dir).
//   2. MEDIUM npm's own extraction is not bounded at all: a tarball of a
//      few MiB unpacks to any size (gzip of zeros, ~1000:1) on the host's
//      disk, in mcpcell's cache, before and without any script cell (also
//      with --install-scripts=skip). The scripts' 1 GiB budget is moot when
//      the same package may ship 10 GiB of zeros in a 10 MiB tarball.
//      Reproduce: a package whose tarball holds a 1200 MiB file of zeros;
//      `mcpcell install --install-scripts=skip npx://pkg@1.0.0`: published,
//      1.2 GiB in ~/.cache/mcpcell/npx.
//      (Not tested, same shape: a uvx:// wheel is a zip, deflate ~1000:1,
//      unpacked by the host pip without a bound.)
//      Suggested fix: bound the install as the scripts are: the host npm's
//      run watched with the same statvfs count (stop npm past a budget for
//      the whole install), or refuse a packument whose dist.unpackedSize
//      (or the tarball's gzip ratio / tar headers, read before npm) exceeds
//      a limit; RLIMIT_FSIZE on the host npm bounds one file only.
//   3. MEDIUM the budget's follower (Follow) also copies the scripts'
//      output to mcpcell's stderr itself (ScriptOutput::Add, a blocking
//      write of up to 1 MiB to the client's stderr): while the client does
//      not read its stderr (busy, reading it only after the server answers,
//      a terminal paused with Ctrl-S), the follower sits in write(2) and
//      looks at neither the disk nor the clock. A script whose background
//      process prints 400 KB (it blocks, the script goes on) writes 1.5 GiB
//      unchecked (test below; three 500 MiB files, then a marker); for as
//      long as the client stays away, --install-timeout is not kept either,
//      and the disk fills. The budget strikes only when the client reads.
//      Reproduce: install with stderr a pipe nobody reads for 5 s; script
//      `(yes | head -c 400000) & for i in 1 2 3; do head -c 500M /dev/zero
//      > f$i; done`.
//      Suggested fix: keep the disk and time checks off the output path: a
//      timerfd/poll loop that never blocks on the client (write to stderr
//      non-blocking, or from another thread through a bounded queue that
//      drops to the tail when full), or the checks on a thread of their own.
//   4. MEDIUM scripts run in place (RunScriptsInPlace: a published install
//      made with --install-scripts=skip or by an older mcpcell, whose scripts
//      the next default launch runs) are not undone when they fail or are
//      stopped at the budget: what they wrote stays in the published
//      directory, and the next launch runs them again with a fresh baseline
//      (a new NativeScriptCell). Every retry adds up to 1 GiB, for good; MCP
//      clients restart a failing server on their own. Two failed runs: 1.4
//      GiB left (test below).
//      Reproduce: `mcpcell install --install-scripts=skip npx://x@1.0.0`,
//      then `mcpcell install npx://x@1.0.0` twice; script `head -c 700M
//      /dev/zero > big-$(date +%s%N).bin; exit 1`.
//      Suggested fix: run in-place scripts on a copy (a fresh .install-* dir,
//      published by rename on success, as a first install is), or remove the
//      published install when they fail, so each attempt starts from the
//      tarball's files.
// Held (checked by hand or read, not kept as tests): the cell's other
// writable file systems are all size-bounded tmpfs (/ 8 MiB, /tmp and
// /dev/shm 128 MiB, HOME 64 MiB, seen with df in a cell); reflink ioctls
// (FICLONE/FICLONERANGE/FIDEDUPERANGE) share blocks and allocate none (and
// ext4 refuses them); copy_file_range, sendfile, splice and shared-mmap
// writes go through the page cache like write(2), which ext4's statfs counts
// at once (dirty delalloc clusters are taken from f_bfree); io_uring is
// ENOSYS. Between two looks (100 ms) a script still writes at page-cache
// speed (a few hundred MiB), then is stopped and its install removed, as
// THREAT_MODEL says.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { scriptsHome } from './lib/npm_registry.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
after(removeTempDirs);
const { install } = scriptsHome('e2e-adv19-disk-home');

/** Bytes of disk below `dir` (every entry). */
function duBytes(dir) {
  if (!existsSync(dir)) return 0;
  let total = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      total += lstatSync(p).blocks * 512;
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return total;
}

/**
 * A registry serving `packages` ({ name, manifest, files, zeros: { rel: MiB } }):
 * `zeros` are files of that many MiB of zeros in the tarball (gzip: ~1000:1).
 */
async function startRegistry(packages) {
  const built = new Map();
  for (const p of packages) {
    const dir = makeTempDir('adv19-pkg');
    const root = path.join(dir, 'package');
    mkdirSync(root);
    const manifest = { name: p.name, version: '1.0.0', license: 'MIT', ...p.manifest };
    writeFileSync(path.join(root, 'package.json'), JSON.stringify(manifest));
    for (const [rel, text] of Object.entries(p.files ?? {})) writeFileSync(path.join(root, rel), text);
    for (const [rel, mib] of Object.entries(p.zeros ?? {})) {
      execFileSync('truncate', ['-s', `${mib}M`, path.join(root, rel)]);
    }
    const file = path.join(dir, 'package.tgz');
    execFileSync('sh', ['-c', 'tar -cf - -C "$1" package | gzip -1 > "$2"', 'sh', dir, file]);
    for (const rel of Object.keys(p.zeros ?? {})) rmSync(path.join(root, rel));
    const bytes = readFileSync(file);
    built.set(p.name, {
      manifest, bytes,
      shasum: createHash('sha1').update(bytes).digest('hex'),
      integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
    });
  }
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.slice(1).split('?')[0]);
    const tgz = url.match(/^(.+)\/-\/[^/]+\.tgz$/);
    const pkg = built.get(tgz ? tgz[1] : url);
    if (!pkg) { res.writeHead(404); res.end('{}'); return; }
    if (tgz) { res.writeHead(200, { 'content-length': pkg.bytes.length }); res.end(pkg.bytes); return; }
    const base = `http://${req.headers.host}`;
    const { name, version } = pkg.manifest;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name, 'dist-tags': { latest: version }, versions: { [version]: {
      ...pkg.manifest, dist: { tarball: `${base}/${name}/-/${name}-${version}.tgz`, shasum: pkg.shasum, integrity: pkg.integrity },
    } } }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) };
}

const topPackage = (top, deps) => ({
  name: top,
  manifest: { bin: { [top]: 'server.js' }, dependencies: Object.fromEntries(deps.map((d) => [d, '1.0.0'])) },
  files: { 'server.js': '#!/usr/bin/env node\n' },
});

test('adv19: a script that deletes what its tarball shipped gets that much more budget: 1.6 GiB written and published', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv19-credit-top-${id}`;
  const a = `e2e-adv19-credit-a-${id}`;
  const reg = await startRegistry([
    {
      name: a,
      manifest: { scripts: { install: 'rm -f pad.bin && head -c 800M /dev/zero > a.bin && head -c 800M /dev/zero > b.bin && echo wrote-1600' } },
      files: { 'index.js': '' },
      zeros: { 'pad.bin': 700 },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const taken = duBytes(installDir);
  t.after(() => rmSync(installDir, { recursive: true, force: true }));
  t.diagnostic(`exit ${r.code}; ${taken >> 20} MiB in ${installDir}\n${r.stderr.slice(-600)}`);
  assert.doesNotMatch(r.stderr, /^wrote-1600$/m, 'the install\'s script wrote 1600 MiB (the budget is 1024)');
  assert.ok(taken < (1 << 30) + (200 << 20), `the install put ${taken >> 20} MiB its script wrote into the host's cache (exit ${r.code})`);
});

test('adv19: npm\'s extraction of a tarball is unbounded: ~1 MiB of gzip puts 1.2 GiB in the host\'s cache (no script at all)', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv19-bomb-top-${id}`;
  const reg = await startRegistry([{ ...topPackage(top, []), zeros: { 'pad.bin': 1200 } }]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const taken = duBytes(installDir);
  t.after(() => rmSync(installDir, { recursive: true, force: true }));
  t.diagnostic(`exit ${r.code}; ${taken >> 20} MiB in ${installDir}\n${r.stderr.slice(-400)}`);
  assert.ok(taken < (1 << 30), `a ${1200}-MiB tarball payload was published in the host's cache (${taken >> 20} MiB, exit ${r.code})`);
});

test('adv19: a client that is slow to read stderr stalls the budget\'s follower: 1.5 GiB written while it waits', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv19-stall-top-${id}`;
  const a = `e2e-adv19-stall-a-${id}`;
  // 400 KiB of output (more than the client's pipe holds) from a background
  // process, which then waits on its own write; meanwhile 1.5 GiB to disk.
  const script = '(head -c 400000 /dev/zero | tr "\\0" "x" | fold -w 100) & sleep 1; for i in 1 2 3; do head -c 500M /dev/zero > f$i || exit 0; done; echo wrote > wrote-1500.txt; wait';
  const reg = await startRegistry([
    { name: a, manifest: { scripts: { install: script } }, files: { 'index.js': '' } },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const home = mkdtempSync('/var/tmp/e2e-adv19-stall-');
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
    npm_config_cache: path.join(home, 'npm-cache'), npm_config_update_notifier: 'false', npm_config_registry: reg.url };
  // The client reads stdout, and its stderr only later (a busy event loop, a paused terminal).
  const child = spawn(MCPCELL_BIN, ['install', `npx://${top}@1.0.0`], { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.resume();
  t.after(() => child.kill('SIGKILL'));
  const npx = path.join(home, '.cache', 'mcpcell', 'npx');
  let written = '';
  for (let i = 0; i < 400 && !written; i++) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      for (const n of readdirSync(npx)) {
        const f = path.join(npx, n, 'node_modules', a, 'wrote-1500.txt');
        if (existsSync(f)) written = f;
      }
    } catch { /* not yet */ }
  }
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const code = await new Promise((r) => child.on('close', r));
  t.diagnostic(`exit ${code}; written: ${written || 'no'}\n${stderr.slice(-300)}`);
  assert.equal(written, '', 'the script wrote 1500 MiB while the follower was blocked on stderr (no disk check)');
});

test('adv19: scripts run in place (an install made with --install-scripts=skip) keep what they wrote when they fail: each launch adds its budget', {
  timeout: 240_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv19-inplace-top-${id}`;
  const a = `e2e-adv19-inplace-a-${id}`;
  const reg = await startRegistry([
    { name: a, manifest: { scripts: { install: 'head -c 700M /dev/zero > big-$(date +%s%N).bin; exit 1' } }, files: { 'index.js': '' } },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const home = mkdtempSync('/var/tmp/e2e-adv19-inplace-');
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', XDG_CACHE_HOME: path.join(home, '.cache'),
    npm_config_cache: path.join(home, 'npm-cache'), npm_config_update_notifier: 'false', npm_config_registry: reg.url };
  const mcpcell = (args) => new Promise((resolve) => {
    const child = spawn(MCPCELL_BIN, args, { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
  const skipped = await mcpcell(['install', '--install-scripts=skip', `npx://${top}@1.0.0`]);
  assert.equal(skipped.code, 0, `install without scripts (test setup): ${skipped.stderr.slice(-500)}`);
  const installDir = path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`);
  const runs = [];
  for (let i = 0; i < 2; i++) runs.push(await mcpcell(['install', `npx://${top}@1.0.0`]));
  const taken = duBytes(installDir);
  t.diagnostic(`exits ${runs.map((r) => r.code).join(' ')}; ${taken >> 20} MiB in ${installDir}\n${runs[1].stderr.slice(-500)}`);
  assert.ok(runs.every((r) => /running the install scripts/.test(r.stderr)), 'the scripts ran in place (test setup)');
  assert.ok(taken < (1 << 30) + (200 << 20), `two failed in-place script runs left ${taken >> 20} MiB in the published install`);
});
