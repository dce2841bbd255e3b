// Adversary tests against idmapped grants (issue 14 item 5) and read-only
// carve-outs. Each test states the invariant it attacks; a failing test is a
// finding (see the report of branch adv), a passing one a regression test.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { lines, runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, REPO_DIR } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const isRoot = process.getuid() === 0;
const PROBE = [path.join(path.dirname(MCPCELL_BIN), 'adv_idmap_probe'), path.join(REPO_DIR, 'build', 'adv_idmap_probe')]
  .find((p) => existsSync(p));

function getcap(file) {
  const r = spawnSync('getcap', [file], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}

/** A root-owned 0644 file holding cap_setuid=ep: no exec bit, so not "privileged" yet. */
function plantNonExecCapFile(dir) {
  const file = path.join(dir, 'tool');
  writeFileSync(file, 'original content, long enough to take the payload of the cell...........\n');
  chmodSync(file, 0o644);
  assert.equal(spawnSync('setcap', ['cap_setuid+ep', file]).status, 0, 'setcap');
  assert.match(getcap(file), /cap_setuid/);
  return file;
}

function probeSteps(stdout) {
  return Object.fromEntries(lines(stdout).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).map((x) => [x.step, x]));
}

for (const grant of ['dir', 'file']) {
  test(`no executable with file capabilities appears on the host: the owner's non-executable capability file (--write ${grant})`, { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    if (!isRoot) return t.skip('setcap and a mapped root-owned grant need root');
    if (spawnSync('setcap', ['-h']).error) return t.skip('setcap is not installed');
    if (!PROBE) return t.skip('adv_idmap_probe is not built');
    const dir = makeTempDir('advcap');
    chmodSync(dir, 0o755);
    const file = plantNonExecCapFile(dir);
    const target = grant === 'dir' ? dir : file;
    const r = await runInCell(['--write', target, '--read', path.dirname(PROBE)], [PROBE, 'mmap-then-exec', file]);
    const steps = probeSteps(r.stdout);
    const st = statSync(file);
    const caps = getcap(file);
    // The invariant: never a file on the host that is executable and holds
    // file capabilities the cell could have written. Either the grant is not
    // mapped (the cell cannot write the root-owned file) or the rewrite/chmod fails.
    const execWithCaps = (st.mode & 0o111) !== 0 && /cap_setuid/.test(caps);
    const rewritten = readFileSync(file, 'utf8').includes('planted-by-the-cell');
    assert.ok(!(execWithCaps && rewritten),
      `the cell left an executable with ${caps} and its own content on the host (mode ${(st.mode & 0o7777).toString(8)}, ` +
      `uid ${st.uid}); steps ${JSON.stringify(steps)}; stderr ${r.stderr}`);
  });
}

test('chown/lchown to other ids in a mapped root-owned grant fails', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('a mapped grant needs root');
  if (!PROBE) return t.skip('adv_idmap_probe is not built');
  const dir = makeTempDir('advchown');
  chmodSync(dir, 0o755);
  const file = path.join(dir, 'f');
  writeFileSync(file, 'x');
  const r = await runInCell(['--write', dir, '--read', path.dirname(PROBE)], [PROBE, 'chown', file, '65534', '65534']);
  const steps = probeSteps(r.stdout);
  for (const name of ['chown', 'lchown uid', 'chown gid']) {
    assert.equal(steps[name]?.rc, -1, `${name}: ${r.stdout} ${r.stderr}`);
  }
  const st = statSync(file);
  assert.deepEqual([st.uid, st.gid], [0, 0]);
});

test('a --read carve-out inside a --write grant keeps its host path: renaming its parent does not let the cell replace it', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dir = makeTempDir('advcarve');
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'a', 'sub'), { recursive: true });
  const ro = path.join(dir, 'a', 'sub', 'ro.txt');
  writeFileSync(ro, 'read-only-original\n');
  const sh = `mv ${dir}/a ${dir}/b; echo mv=$?; mkdir -p ${dir}/a/sub && echo planted > ${ro}; echo plant=$?`;
  const r = await runInCell(['--write', dir, '--read', path.join(dir, 'a', 'sub')], ['/bin/sh', '-c', sh]);
  assert.equal(r.code, 0, r.stderr);
  // The host path the user granted read-only must still hold what it held.
  assert.equal(readFileSync(ro, 'utf8'), 'read-only-original\n',
    `the cell replaced the read-only ${ro} by renaming its parent (${r.stdout.trim()})`);
});

test('io_uring, device nodes, fchmodat2 with flags and a setgid parent leave no setid file or device in a mapped grant', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!PROBE) return t.skip('adv_idmap_probe is not built');
  const dir = makeTempDir('advmisc');
  chmodSync(dir, 0o2755);  // setgid parent: new directories inherit S_ISGID, files must not get it
  const r = await runInCell(['--write', dir, '--read', path.dirname(PROBE)], [PROBE, 'misc', dir]);
  const steps = probeSteps(r.stdout);
  assert.equal(steps['io_uring_setup (IORING_OP_OPENAT would carry a mode)']?.errno, 'ENOSYS', r.stdout + r.stderr);
  for (const name of ['mknod char 1:3', 'mknod block 8:0', 'fchmodat2 4755 AT_SYMLINK_NOFOLLOW', 'fchmodat2 2755 AT_EMPTY_PATH on O_PATH']) {
    assert.equal(steps[name]?.rc, -1, `${name}: ${r.stdout}`);
  }
  assert.equal(steps['create in a dir']?.rc, 0, 'the control: ordinary creation works');
  for (const f of ['target', path.join('sgid-dir', 'f')]) {
    assert.equal(statSync(path.join(dir, f)).mode & 0o6000, 0, `${f} has a setid bit on the host`);
  }
  assert.equal(existsSync(path.join(dir, 'null')) || existsSync(path.join(dir, 'sda')), false, 'a device node on the host');
});

// Design decision (was a question of the adversary pass): read-only grants
// are mapped too, so as root "the owner" is root and `--read` of a
// root-owned tree hands the cell what root can read there (a 0600 key):
// the owner's access is what a grant means (docs/THREAT_MODEL.md, "Granted
// directories as their owner's"). --idmap=off restores the cell's own uid,
// which reads such a file only through the "other" bits. Both are asserted.
test('a --read grant of a root-owned directory reads as root (documented); --idmap=off reads as the cell uid', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('root-owned grants are mapped only when mcpcell runs as root');
  const dir = makeTempDir('advrokey');
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'ssl'), { mode: 0o755 });
  const key = path.join(dir, 'ssl', 'server.key');
  writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nADV-ROOT-ONLY\n');
  chmodSync(key, 0o600);
  const sh = `cat ${key} 2>/dev/null; true`;
  const mapped = await runInCell(['--read', dir], ['/bin/sh', '-c', sh]);
  assert.equal(mapped.code, 0, mapped.stderr);
  assert.match(mapped.stdout, /ADV-ROOT-ONLY/, `the owner (root) may read its 0600 file through the grant: ${mapped.stderr}`);
  const off = await runInCell(['--idmap=off', '--read', dir], ['/bin/sh', '-c', sh]);
  assert.equal(off.code, 0, off.stderr);
  assert.doesNotMatch(off.stdout, /ADV-ROOT-ONLY/, '--idmap=off: the cell uid read a root-only 0600 key');
});

test('the same route with a real program: a host user who runs what the cell wrote gets no capability', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('setcap, a mapped root-owned grant and runuser need root');
  if (spawnSync('setcap', ['-h']).error) return t.skip('setcap is not installed');
  if (!PROBE) return t.skip('adv_idmap_probe is not built');
  if (spawnSync('id', ['-u', 'mcpcell-test']).status !== 0) return t.skip('no mcpcell-test user');
  const dir = makeTempDir('advcapelf');
  chmodSync(dir, 0o755);
  const tool = path.join(dir, 'tool');
  writeFileSync(tool, Buffer.alloc(300_000));  // room for /usr/bin/cat
  chmodSync(tool, 0o644);
  assert.equal(spawnSync('setcap', ['cap_setuid+ep', tool]).status, 0);
  await runInCell(['--write', dir, '--read', path.dirname(PROBE)], [PROBE, 'mmap-copy-then-exec', '/usr/bin/cat', tool]);
  const run = spawnSync('runuser', ['-u', 'mcpcell-test', '--', tool, '/proc/self/status'], { encoding: 'utf8' });
  const capEff = /^CapEff:\s*([0-9a-f]+)/m.exec(run.stdout ?? '')?.[1] ?? '0';
  assert.equal(BigInt(`0x${capEff}`), 0n,
    `mcpcell-test ran the program the cell wrote with CapEff ${capEff} (cap_setuid = 0x80): ${getcap(tool)}`);
});

// The fix of the carve-out finding: every directory between a --write grant
// and a --read grant inside it is a mount point in the cell (pinned), so
// neither rename(2) nor rmdir(2) can take the read-only grant away from its
// host path. Both orders of the flags, three levels, every ancestor.
for (const order of ['write-first', 'read-first']) {
  test(`no ancestor of a nested --read grant can be renamed or removed (${order}, three levels deep)`, { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const dir = makeTempDir('advpin');
    chmodSync(dir, 0o755);
    const sub = path.join(dir, 'a', 'b', 'c', 'sub');
    mkdirSync(sub, { recursive: true });
    const ro = path.join(sub, 'ro.txt');
    writeFileSync(ro, 'read-only-original\n');
    const ancestors = ['a', 'a/b', 'a/b/c'].map((p) => path.join(dir, p));
    const sh = [
      ...ancestors.flatMap((p, i) => [
        `mv ${p} ${dir}/moved${i} 2>/dev/null; echo "mv ${i}=$?"`,
        `rm -rf ${p} 2>/dev/null; echo "rm ${i}=$?"`,
      ]),
      // RENAME_EXCHANGE (renameat2(2)) swaps instead of moving: a mount point is EBUSY there too.
      `mkdir -p ${dir}/z; python3 -c 'import ctypes,sys; l=ctypes.CDLL(None); sys.exit(0 if l.renameat2(-100, b"${ancestors[0]}", -100, b"${dir}/z", 2) == 0 else 1)'; echo "xchg=$?"`,
      `mkdir -p ${sub} 2>/dev/null; echo planted > ${ro} 2>/dev/null; echo "plant=$?"`,
      `echo ok > ${ancestors[1]}/new.txt; echo "write=$?"`,
    ].join('; ');
    const flags = order === 'write-first' ? ['--write', dir, '--read', sub] : ['--read', sub, '--write', dir];
    const r = await runInCell(flags, ['/bin/sh', '-c', sh]);
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout;
    for (let i = 0; i < ancestors.length; i++) {
      assert.match(out, new RegExp(`mv ${i}=[1-9]`), `mv of ${ancestors[i]} succeeded: ${out}`);
    }
    if (spawnSync('python3', ['-c', '1']).status === 0) assert.match(out, /xchg=1/, `RENAME_EXCHANGE of ${ancestors[0]}: ${out}`);
    else t.diagnostic('python3 is not installed: RENAME_EXCHANGE not tried');
    assert.match(out, /plant=[1-9]/, `the read-only file was written: ${out}`);
    assert.match(out, /write=0/, `the control: the writable grant is still writable around the pins: ${out}`);
    assert.equal(readFileSync(ro, 'utf8'), 'read-only-original\n', `the host's ${ro} was replaced: ${out}`);
    assert.equal(readFileSync(path.join(ancestors[1], 'new.txt'), 'utf8'), 'ok\n');
    for (const p of ancestors) assert.ok(statSync(p).isDirectory(), `${p} is gone on the host`);
  });
}

test('a writable grant with a nested 1777 directory is not mapped (said); --idmap=on refuses it', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('only root maps grants');
  const dir = makeTempDir('advshared');
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'x', 'spool'), { recursive: true });
  chmodSync(path.join(dir, 'x', 'spool'), 0o1777);
  const r = await runInCell(['--write', dir], ['/bin/sh', '-c', 'id -u']);
  assert.match(r.stderr, /not mapped to its owner: .*shared \(sticky or world-writable\) directory \(x\/spool\)/, r.stderr);
  const on = await runInCell(['--idmap=on', '--write', dir], ['/bin/true']);
  assert.notEqual(on.code, 0);
  assert.match(on.stderr, /--idmap=on.*x\/spool/, on.stderr);
});

test('--idmap=on refuses a writable grant holding a non-executable capability file, naming it', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!isRoot) return t.skip('setcap and a mapped root-owned grant need root');
  if (spawnSync('setcap', ['-h']).error) return t.skip('setcap is not installed');
  const dir = makeTempDir('advcapon');
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'lib'));
  plantNonExecCapFile(path.join(dir, 'lib'));
  const on = await runInCell(['--idmap=on', '--write', dir], ['/bin/true']);
  assert.notEqual(on.code, 0);
  assert.match(on.stderr, /--idmap=on.*file capabilities.*lib\/tool/, on.stderr);
});
