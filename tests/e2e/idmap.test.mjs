// Granted directories behave as their owner's (issue 14 item 5): as root the
// cell's user is a host uid of its own, so a root-owned /data was refused and
// git called a repository "dubious". The grant is now an idmapped mount: the
// owner's uid and group are the cell's there. And the danger that brings —
// a cell writing root-owned files — is closed: no route creates a setuid or
// setgid bit or a file capability, and no such bit ever appears on the host.
// Runs as root and as the normal user (mcpcell-test).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, lines, resultText, runInCell, runMcpcell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { isCellHostId } from './lib/host.mjs';
import { MCPCELL_BIN, NODE_BIN, REPO_DIR, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const isRoot = process.getuid() === 0;
const PROBE = [path.join(path.dirname(MCPCELL_BIN), 'setid_probe'), path.join(REPO_DIR, 'build', 'setid_probe')]
  .find((p) => existsSync(p));

function idsOf(user) {
  const r = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** A 0755 directory owned by `ids` (root may chown; a normal user gets its own). */
function ownedDir(label, ids) {
  const dir = makeTempDir(label);
  if (isRoot) chownSync(dir, ids.uid, ids.gid);
  return dir;
}

/** The owners a test runs against: root's own dirs and a normal user's (as root); one's own (as a user). */
function owners() {
  if (!isRoot) return [{ name: `uid ${process.getuid()} (self)`, uid: process.getuid(), gid: process.getgid() }];
  const user = idsOf('mcpcell-test');
  const list = [{ name: 'root', uid: 0, gid: 0 }];
  if (user) list.push({ name: 'mcpcell-test', ...user });
  return list;
}

/** Every entry below `dir` (not following links): [path, lstat]. */
function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = lstatSync(p);
    out.push([p, st]);
    if (st.isDirectory()) out.push(...walk(p));
  }
  return out;
}

function setIdFiles(dir) {
  return walk(dir).filter(([, st]) => (st.mode & 0o6000) !== 0).map(([p, st]) => `${p} ${(st.mode & 0o7777).toString(8)}`);
}

const readText = (client, p) => client.callTool({ name: 'read_text_file', arguments: { path: p } });
const writeText = (client, p, content) => client.callTool({ name: 'write_file', arguments: { path: p, content } });

for (const owner of owners()) {
  test(`server-filesystem reads and writes a 0755 dir owned by ${owner.name}; what it creates is the owner's`, { timeout: 90_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const dir = ownedDir('own', owner);
    // Only the owner can read this one: the cell reads it as the owner.
    writeFileSync(path.join(dir, 'owner-only.txt'), 'for-the-owner');
    if (isRoot) chownSync(path.join(dir, 'owner-only.txt'), owner.uid, owner.gid);
    chmodSync(path.join(dir, 'owner-only.txt'), 0o600);
    const s = startServer(t, ['--write', dir], [NODE_BIN, serverEntry('server-filesystem'), dir]);
    await s.connect().catch((e) => assert.fail(`${e.message}\nmcpcell stderr:\n${s.stderr()}`));
    const read = await readText(s.client, path.join(dir, 'owner-only.txt'));
    assert.equal(resultText(read), 'for-the-owner', s.stderr());
    const wrote = await writeText(s.client, path.join(dir, 'new.txt'), 'written-in-the-cell');
    assert.equal(wrote.isError, undefined, resultText(wrote) + s.stderr());
    const made = await s.client.callTool({ name: 'create_directory', arguments: { path: path.join(dir, 'sub') } });
    assert.equal(made.isError, undefined, resultText(made));
    await s.client.close();
    assert.deepEqual(await s.exited, { code: 0, signal: null }, s.stderr());
    assert.doesNotMatch(s.stderr(), /not mapped to its owner/);
    for (const name of ['new.txt', 'sub']) {
      const st = statSync(path.join(dir, name));
      assert.deepEqual([st.uid, st.gid], [owner.uid, owner.gid], `${name} on the host`);
    }
    assert.equal(readFileSync(path.join(dir, 'new.txt'), 'utf8'), 'written-in-the-cell');
  });

  test(`every route to a setuid/setgid file or a file capability fails in a dir owned by ${owner.name}`, { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    if (!PROBE) return t.skip('setid_probe is not built (cmake --build build --target setid_probe)');
    const dir = ownedDir('setid', owner);
    const r = await runInCell(['--write', dir, '--read', path.dirname(PROBE)], [PROBE, dir]);
    assert.equal(r.code, 0, r.stderr);
    const reports = lines(r.stdout).map((l) => JSON.parse(l));
    const attempts = reports.filter((x) => x.route);
    assert.ok(attempts.length >= 21, r.stdout);
    for (const a of attempts) assert.equal(a.refused, true, `${a.route} succeeded`);
    const errnos = Object.fromEntries(attempts.map((a) => [a.route, a.errno]));
    assert.equal(errnos['chmod 4755'], 'EPERM');
    assert.equal(errnos['openat2 O_CREAT 4755'], 'ENOSYS');
    assert.equal(errnos['setxattr security.capability'], 'EOPNOTSUPP');
    assert.match(errnos['link a setuid file of the host'], /EXDEV|EPERM|ENOENT/);
    assert.match(errnos['x32 chmod 4755'], /Bad system call/);
    const ordinary = reports.find((x) => 'ordinary_work' in x);
    assert.equal(ordinary.ordinary_work, true, r.stdout);
    // The owner's directory is the cell user's own inside (git's ownership check reads this).
    assert.equal(ordinary.dir_uid_inside, ordinary.my_uid);
    assert.deepEqual(setIdFiles(dir), [], 'a setuid/setgid bit reached the host');
    for (const [p, st] of walk(dir)) assert.equal(st.uid, owner.uid, `${p} is not the owner's`);
  });
}

test('a read-only grant of a root-owned dir stays read-only', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('root-owned grants are mapped only when mcpcell runs as root');
  const dir = ownedDir('ro', { uid: 0, gid: 0 });
  writeFileSync(path.join(dir, 'root-only.txt'), 'root-secret-ish');
  chmodSync(path.join(dir, 'root-only.txt'), 0o600);
  const r = await runInCell(['--read', dir], ['/bin/sh', '-c',
    `cat ${dir}/root-only.txt; echo x > ${dir}/new.txt; echo "write=$?"; chmod 0777 ${dir}/root-only.txt; echo "chmod=$?"`]);
  assert.match(r.stdout, /root-secret-ish/, r.stderr);
  assert.match(r.stdout, /write=[1-9]/);
  assert.match(r.stdout, /chmod=[1-9]/);
  assert.match(r.stderr, /Read-only file system/);
  assert.equal(existsSync(path.join(dir, 'new.txt')), false);
  assert.equal(statSync(path.join(dir, 'root-only.txt')).mode & 0o777, 0o600);
});

test('git: a repository owned by someone else is not "dubious" in a root-run cell', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('a normal user\'s cell is that user: nothing to map');
  if (spawnSync('git', ['--version']).status !== 0) return t.skip('git is not installed on this machine');
  const user = idsOf('mcpcell-test');
  if (!user) return t.skip('no mcpcell-test user');
  const repo = ownedDir('git', user);
  assert.equal(spawnSync('runuser', ['-u', 'mcpcell-test', '--', 'git', 'init', '-q', repo]).status, 0);
  const status = ['/usr/bin/git', '-C', repo, 'status', '--porcelain'];
  // --read: unmapped, a 0755 dir of another user could not be granted --write at all.
  const control = await runInCell(['--read', repo, '--idmap=off'], status);
  assert.notEqual(control.code, 0, 'control: without the mapping git should refuse');
  assert.match(control.stderr, /dubious ownership/);
  const mapped = await runInCell(['--write', repo], status);
  assert.equal(mapped.code, 0, mapped.stderr);
  assert.doesNotMatch(mapped.stderr, /dubious/);
});

test('a writable grant holding the owner\'s setuid file is not mapped (an mmap write keeps the bit)', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('needs a setuid-root file: root only');
  const dir = ownedDir('suid', { uid: 0, gid: 0 });
  mkdirSync(path.join(dir, 'deep', 'er'), { recursive: true });
  const suid = path.join(dir, 'deep', 'er', 'tool');
  writeFileSync(suid, '#!/bin/sh\necho original\n');
  chmodSync(suid, 0o4755);
  const auto = await runInCell(['--write', dir], ['/bin/true']);
  assert.match(auto.stderr, /not mapped to its owner: .*setuid.*deep\/er\/tool.*mmap/s);
  // Bound as the cell's own id instead: a root 0755 dir is then not writable, and said so.
  assert.equal(auto.code, EXIT.usage, auto.stderr);
  const on = await runInCell(['--write', dir, '--idmap=on'], ['/bin/true']);
  assert.equal(on.code, EXIT.usage);
  assert.match(on.stderr, /--idmap=on.*cannot mount it as its owner's.*setuid/s);
  assert.equal(readFileSync(suid, 'utf8'), '#!/bin/sh\necho original\n');
  assert.equal(statSync(suid).mode & 0o7777, 0o4755);
});

test('a writable grant holding the owner\'s file with capabilities is not mapped (mmap keeps them too)', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('setcap needs root');
  if (spawnSync('setcap', ['-h']).error) return t.skip('setcap is not installed');
  const dir = ownedDir('fcaps', { uid: 0, gid: 0 });
  const tool = path.join(dir, 'bin', 'pinger');
  mkdirSync(path.dirname(tool));
  writeFileSync(tool, 'not really a binary\n');
  chmodSync(tool, 0o755);
  assert.equal(spawnSync('setcap', ['cap_net_raw+ep', tool]).status, 0);
  const on = await runInCell(['--write', dir, '--idmap=on'], ['/bin/true']);
  assert.equal(on.code, EXIT.usage);
  assert.match(on.stderr, /file capabilities.*bin\/pinger/s);
});

test('the control: outside a cell, the same routes do set the bits', { timeout: 30_000 }, async (t) => {
  if (!PROBE) return t.skip('setid_probe is not built');
  const dir = makeTempDir('bare');
  // SETID_PROBE_NO_HOST: outside a cell nothing stops a link to the host's own
  // setuid files; the control never touches them.
  const r = spawnSync(PROBE, [dir], { encoding: 'utf8', env: { ...process.env, SETID_PROBE_NO_HOST: '1' } });
  const attempts = lines(r.stdout).map((l) => JSON.parse(l)).filter((x) => x.route);
  const worked = attempts.filter((a) => !a.refused).map((a) => a.route);
  for (const route of ['chmod 4755', 'fchmodat 6755', 'open O_CREAT 4755', 'creat 6755', 'mknod S_IFREG 4755']) {
    assert.ok(worked.includes(route), `${route} failed even without a cell: ${r.stdout}`);
  }
  assert.notDeepEqual(setIdFiles(dir), []);
});

test('a hard link to another user\'s setuid file inside a mapped grant is refused (protected_hardlinks)', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('planting another user\'s setuid file needs root');
  if (readFileSync('/proc/sys/fs/protected_hardlinks', 'utf8').trim() !== '1') return t.skip('fs.protected_hardlinks is off here');
  const dir = ownedDir('hardlink', { uid: 0, gid: 0 });
  const planted = path.join(dir, 'nobodys-tool');
  writeFileSync(planted, '#!/bin/sh\n');
  chownSync(planted, 65534, 65534);
  chmodSync(planted, 0o4755);  // nobody's, not the owner's: the grant is still mapped
  const r = await runInCell(['--write', dir], ['/bin/sh', '-c', `ln ${planted} ${dir}/linked; echo "ln=$?"; touch ${dir}/mine; echo "touch=$?"`]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /ln=[1-9]/);
  assert.match(r.stdout, /touch=0/, 'the grant was mapped (root-owned 0755, written by the cell)');
  assert.equal(existsSync(path.join(dir, 'linked')), false);
  assert.equal(statSync(planted).nlink, 1);
  assert.deepEqual(setIdFiles(dir).filter((f) => !f.startsWith(planted + ' ')), []);
});

test('a shared (1777) directory is not mapped: the cell would own every user\'s files there', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('root only');
  const dir = makeWritableDir('shared');
  chmodSync(dir, 0o1777);
  const r = await runInCell(['--write', dir], ['/bin/sh', '-c', `echo x > ${dir}/cell.txt`]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(isCellHostId(statSync(path.join(dir, 'cell.txt')).uid), 'the cell wrote as its own id');
  const on = await runInCell(['--write', dir, '--idmap=on'], ['/bin/true']);
  assert.equal(on.code, EXIT.usage);
  assert.match(on.stderr, /shared with every user/);
});

test('a filesystem the kernel cannot idmap (ramfs): said, and bound as before; --idmap=on refuses', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('mounting a ramfs needs root');
  const dir = makeTempDir('ramfs');
  assert.equal(spawnSync('mount', ['-t', 'ramfs', 'none', dir]).status, 0);
  t.after(() => spawnSync('umount', [dir]));
  chmodSync(dir, 0o755);
  const r = await runInCell(['--read', dir], ['/bin/true']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /--read .* is not mapped to its owner: the kernel cannot idmap it/);
  const on = await runInCell(['--read', dir, '--idmap=on'], ['/bin/true']);
  assert.equal(on.code, EXIT.usage);
  assert.match(on.stderr, /--idmap=on.*the kernel cannot idmap it/s);
});

test('a normal user cannot map ids: --idmap=on refuses another user\'s --write dir, auto writes it as the user', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (isRoot) return t.skip('runs as the normal user (the mcpcell-test pass)');
  const on = await runInCell(['--write', '/var/tmp', '--idmap=on'], ['/bin/true']);
  assert.equal(on.code, EXIT.usage);
  assert.match(on.stderr, /--idmap=on \/var\/tmp: cannot mount it as its owner's: only root can map ids/);
  const auto = await runInCell(['--write', '/var/tmp'], ['/bin/true']);
  assert.equal(auto.code, 0, auto.stderr);
  assert.doesNotMatch(auto.stderr, /not mapped/, 'a shared dir is written as the user, as before, without a word');
});

test('--idmap takes auto, on or off, and --dry-run shows it', async () => {
  const bad = await runMcpcell(['run', '--isolate=native', '--idmap=yes', '--dry-run', '--', '/bin/true']);
  assert.equal(bad.code, EXIT.usage);
  assert.match(bad.stderr, /--idmap.*expected auto, on or off/);
  const dry = await runMcpcell(['run', '--isolate=native', '--idmap=on', '--dry-run', '--', '/bin/true']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(JSON.parse(dry.stdout).cell.idmap, 'on');
  // Container cells do not map ids: asking for it there is refused, not ignored.
  const docker = await runMcpcell(['run', '--isolate=docker', '--idmap=on', '--dry-run', '--', '/bin/true']);
  assert.equal(docker.code, EXIT.usage);
  assert.match(docker.stderr, /--idmap=on .*only native cells/);
});
