// Adversary pass adv18: the install scripts' disk budget (src/cell/script_cell.cc
// Follow: DiskBytesBelow(package_dir) looked at every 100 ms, the cell
// stopped past 1 GiB of growth; util/disk_usage.cc: an fts walk summing
// st_blocks of regular files only; fallocate refused in the cell).
//
// Findings:
//   1. HIGH what the walk cannot reach is not counted, so a script writes
//      without bound (files of up to 1 GiB each, RLIMIT_FSIZE, as many as
//      it likes), persistently, into the host's cache:
//      a) as root too: a chain of directories deeper than PATH_MAX (20 x
//         250-byte names; the script descends by relative chdir). fts with
//         FTS_NOCHDIR stats full paths: ENAMETOOLONG, FTS_NS/FTS_DNR,
//         nothing below counted. The install succeeds and is published
//         with 1.5 GiB in it (std::filesystem::remove_all, which mcpcell
//         and `mcpcell gc` remove with, fails on such a tree as well).
//      b) mcpcell run by a normal user: a directory the walk cannot read.
//         The walk runs as the user, and the script's cell (mapped to the
//         same uid) may `mkdir d && chmod 0300 d`: it can still create and
//         write files in d, but fts cannot list it (FTS_DNR). The install
//         then fails ("read the install ...: Permission denied") but its
//         .install-PID-X directory, 1.5 GiB, stays (the remove cannot list
//         d either).
//      Reproduce: install script `node deep.js` (mkdir+chdir 20 x
//      "d"*250, then three 500 MiB files), or `mkdir h; chmod 300 h; for i
//      in 1 2 3; do head -c 500M /dev/zero > h/f$i; done` as mcpcell-test.
//      Suggested fix: walk with descriptors (openat/fstatat from the
//      package dir's fd, FTS without FTS_NOCHDIR or nftw with FTW_CHDIR),
//      and count anything the walk cannot read or stat as over budget (stop
//      the cell on FTS_DNR/FTS_ERR/FTS_NS); better, measure where nothing
//      hides: the filesystem's free space (statvfs) or a project quota /
//      size-bounded mount for the package dir. Remove trees by descriptor
//      too (and chmod u+rwx on the way, as the user).
//   2. MEDIUM the budget is per cell, not per install: every package with
//      an install script gets its own 1 GiB (disk_before is read per cell).
//      A package with N dependencies that each write 900 MiB leaves N*900
//      MiB in the host's cache, the install succeeding (the same shape as
//      adv13's per-cell output cap, fixed by sharing the budget).
//      Reproduce: 3 dependencies each `head -c 700M /dev/zero > big`.
//      Suggested fix: one budget for the install (the install directory's
//      growth, or a counter shared by the cells as ScriptOutput's shown_).
//   3. LOW only regular files are counted (FTS_F): directories and
//      symlinks take blocks too (ext4: a symlink of more than 60 bytes
//      takes a 4 KiB block, a directory at least one), and every entry an
//      inode; a script making a million empty files or long symlinks takes
//      gigabytes, or all the host's inodes, with a growth of 0 counted.
//      Suggested fix: count st_blocks of every entry (FTS_D, FTS_DP once,
//      FTS_SL, FTS_DEFAULT) and bound the number of entries too.
//   4. LOW a file written and unlinked while open is counted nowhere:
//      the cell holds its blocks until it exits (up to --install-timeout),
//      up to 1 GiB per descriptor and RLIMIT_NOFILE (4096) descriptors.
//      The space comes back when the cell is stopped, so the fill is
//      transient (but a full disk for minutes breaks everything else).
//      Suggested fix: bound the filesystem's free space instead (statvfs:
//      stop the cell when the host's free space has dropped by more than
//      the budget since it started), which counts hidden, unlinked and
//      metadata blocks alike.
//   5. LOW (not tested: this host is ext4) fallocate is refused by
//      seccomp, but XFS's XFS_IOC_RESVSP64/XFS_IOC_ALLOCSP64 ioctls reserve
//      blocks just as instantly on an XFS cache (the ioctl is allowed in
//      the cell): a script outruns the 100 ms look by any amount.
//      Suggested fix: refuse those ioctl commands too (or any ioctl on a
//      regular file but a short allowlist).
// Held: sparse files (st_blocks counts what is allocated), hardlinks out of
// the package dir (EXDEV across the cell's bind mounts), /tmp in the cell
// (a 128 MiB tmpfs), fallocate (EOPNOTSUPP; adv13's test), io_uring (ENOSYS).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { scriptsEnv, scriptsHome, startPackageRegistry } from './lib/npm_registry.mjs';
import { removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
after(removeTempDirs);
const { install } = scriptsHome('e2e-adv18-disk-home');

const TEST_UID = 1001; // mcpcell-test
const TEST_GID = 1001;

const topPackage = (top, deps) => ({
  name: top, version: '1.0.0',
  manifest: { bin: { [top]: 'server.js' }, dependencies: Object.fromEntries(deps.map((d) => [d, '1.0.0'])) },
  files: { 'server.js': '#!/usr/bin/env node\n' },
});

/** Bytes of disk below `dir` (every entry; made readable first, as root). */
function duBytes(dir) {
  if (!existsSync(dir)) return 0;
  let total = 0;
  const walk = (d) => {
    try { chmodSync(d, 0o700); } catch { /* not ours */ }
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      total += lstatSync(p).blocks * 512;
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return total;
}

/** Removes a tree a script may have made unreadable (chmod 0300 dirs). */
function removeTree(dir) {
  if (!existsSync(dir)) return;
  const open = (d) => {
    try { chmodSync(d, 0o700); } catch { return; }
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) open(path.join(d, e.name));
  };
  open(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** `mcpcell install npx://TOP@1.0.0` as mcpcell-test (uid 1001) with a home of its own. */
function installAsTestUser(top, reg) {
  const home = mkdtempSync('/var/tmp/e2e-adv18-disk-user-');
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const env = { ...scriptsEnv(home), npm_config_registry: reg.url };
  const asRoot = process.getuid() === 0;
  return new Promise((resolve, reject) => {
    const child = spawn(MCPCELL_BIN, ['install', `npx://${top}@1.0.0`], {
      env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], ...(asRoot ? { uid: TEST_UID, gid: TEST_GID } : {}),
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.stdout.resume();
    const guard = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ r: { code, stderr }, home, installDir: path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`) });
    });
  });
}

test('adv18: a directory the budget\'s walk cannot read (chmod 0300) hides what a script writes in it: 1.5 GiB written, not stopped', {
  timeout: 150_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv18-hide-top-${id}`;
  const a = `e2e-adv18-hide-a-${id}`;
  const reg = await startPackageRegistry([
    {
      name: a, version: '1.0.0',
      manifest: { scripts: { install: 'mkdir h && chmod 300 h && for i in 1 2 3; do head -c 500M /dev/zero > h/f$i || exit 0; done; echo wrote-all-hidden' } },
      files: { 'index.js': '' },
    },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, home, installDir } = await installAsTestUser(top, reg);
  void installDir;
  // The whole cache: the install failed, but its temporary directory stays
  // (the remove cannot list the 0300 directory either).
  const cache = path.join(home, '.cache', 'mcpcell');
  const leftovers = existsSync(path.join(cache, 'npx')) ? readdirSync(path.join(cache, 'npx')) : [];
  const taken = duBytes(cache);
  t.after(() => removeTree(home));
  t.diagnostic(`exit ${r.code}; ${taken} bytes in ${cache} (${leftovers.join(' ')})\n${r.stderr.slice(-1500)}`);
  assert.doesNotMatch(r.stderr, /^wrote-all-hidden$/m, 'the script wrote 1500 MiB into a directory the walk cannot read');
  assert.ok(taken < (1 << 30) + (200 << 20), `the failed install left ${taken >> 20} MiB a script wrote in the cache: ${leftovers.join(' ')}`);
});

test('adv18: the 1 GiB budget is per package: three dependencies that write 700 MiB each leave 2.1 GiB in the host\'s cache', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv18-multi-top-${id}`;
  const deps = [0, 1, 2].map((i) => `e2e-adv18-multi-${i}-${id}`);
  const reg = await startPackageRegistry([
    ...deps.map((name) => ({
      name, version: '1.0.0',
      manifest: { scripts: { install: 'head -c 700M /dev/zero > big.bin && echo wrote-700' } },
      files: { 'index.js': '' },
    })),
    topPackage(top, deps),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const taken = duBytes(installDir);
  t.after(() => removeTree(installDir));
  t.diagnostic(`exit ${r.code}; ${taken} bytes in ${installDir}`);
  assert.ok(taken < (1 << 30) + (200 << 20), `the install of ${top} put ${taken >> 20} MiB of its scripts' writes into the host's cache (exit ${r.code})`);
});

test('adv18: files written and unlinked while held open are counted nowhere: 1.5 GiB taken from the host\'s disk while the cell runs', {
  timeout: 150_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv18-unlinked-top-${id}`;
  const a = `e2e-adv18-unlinked-a-${id}`;
  // Three descriptors held by the shell, each file removed before it is written.
  const script = 'exec 3>f1 4>f2 5>f3; rm f1 f2 f3; head -c 500M /dev/zero >&3 && head -c 500M /dev/zero >&4 && head -c 500M /dev/zero >&5 && sleep 1 && echo held-1500-unlinked';
  const reg = await startPackageRegistry([
    { name: a, version: '1.0.0', manifest: { scripts: { install: script } }, files: { 'index.js': '' } },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  t.after(() => removeTree(installDir));
  t.diagnostic(`exit ${r.code}\n${r.stderr.slice(-800)}`);
  assert.doesNotMatch(r.stderr, /^held-1500-unlinked$/m, 'the script held 1500 MiB of the host\'s disk, uncounted');
});

test('adv18: symlinks (and directories) are not counted: 1.3 GiB of long symlinks pass the 1 GiB budget', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv18-links-top-${id}`;
  const a = `e2e-adv18-links-a-${id}`;
  // 340,000 symlinks of 4000-byte targets: one 4 KiB block each on ext4.
  const js = 'const fs=require("fs");fs.mkdirSync("l");const t="x".repeat(4000);for(let i=0;i<340000;i++)fs.symlinkSync(t,"l/"+i);console.log("links-made")';
  const reg = await startPackageRegistry([
    { name: a, version: '1.0.0', manifest: { scripts: { install: 'node links.js' } }, files: { 'index.js': '', 'links.js': js } },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  // ~260,000 symlinks before the budget stops it: ~35 s on a quiet machine, more on a busy one.
  const { r, installDir } = await install(top, reg, { guardMs: 160_000 });
  const taken = duBytes(installDir);
  t.after(() => removeTree(installDir));
  t.diagnostic(`exit ${r.code}; ${taken} bytes in ${installDir}\n${r.stderr.slice(-600)}`);
  assert.ok(taken < (1 << 30) + (200 << 20), `the install put ${taken >> 20} MiB of its scripts' symlinks into the host's cache (exit ${r.code})`);
});

test('adv18: a directory chain longer than PATH_MAX hides what a script writes at its bottom from the walk (as root too)', {
  timeout: 150_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-adv18-deep-top-${id}`;
  const a = `e2e-adv18-deep-a-${id}`;
  // 20 directories of 250-byte names: 5000 bytes of path below the package
  // directory; node walks down one relative chdir at a time.
  const js = 'const fs=require("fs");const d="d".repeat(250);for(let i=0;i<20;i++){fs.mkdirSync(d);process.chdir(d)}'
    + 'const b=Buffer.alloc(1<<20);for(let f=0;f<3;f++){const fd=fs.openSync("f"+f,"w");for(let i=0;i<500;i++)fs.writeSync(fd,b);fs.closeSync(fd)}'
    + 'console.log("wrote-all-deep")';
  const reg = await startPackageRegistry([
    { name: a, version: '1.0.0', manifest: { scripts: { install: 'node deep.js' } }, files: { 'index.js': '', 'deep.js': js } },
    topPackage(top, [a]),
  ]);
  t.after(() => reg.close());
  const { r, installDir } = await install(top, reg);
  const cache = path.dirname(installDir);
  t.diagnostic(`exit ${r.code}; ${(readdirSync(cache)).join(' ')}\n${r.stderr.slice(-800)}`);
  t.after(() => removeDeep(cache));
  assert.doesNotMatch(r.stderr, /^wrote-all-deep$/m, 'the script wrote 1500 MiB below PATH_MAX, uncounted');
});

/** Removes `dir` even when it holds paths longer than PATH_MAX (rm -rf walks by descriptors). */
function removeDeep(dir) {
  spawnSync('rm', ['-rf', '--', dir]);
}
