// Adversary pass adv23: a docker cell writes below a --read grant: a mount
// inside the granted directory stays writable.
//
// Finding (MEDIUM: "--read: bound read-only" does not hold for what is
// mounted below the grant — a second disk, NFS/sshfs, a USB stick mounted
// umask=000, a shared 1777 tmpfs, per-user home mounts under --read /home):
// SpecMounts sends a --read grant as a recursive bind with ReadOnly true
// (src/cell/docker/create_body.cc:30-37 BindMount, 116-140). Docker before
// 25 (API 1.41 here, docker.io 20.10) makes only the top mount read-only;
// the submounts rbind brings along keep their own flags, so the cell writes
// there whatever its uid may write. A native cell remounts the whole tree
// read-only (mountinfo: both "ro"); podman binds non-recursively (the
// submount is absent) and gVisor shows it read-only (tried: both refuse the
// write with EROFS).
//   Reproduce (root): mkdir -p /srv/x/sub; mount -t tmpfs -o mode=1777 t
//   /srv/x/sub; mcpcell run --isolate=docker --read /srv/x -- sh -c
//   'echo x >/srv/x/sub/f' succeeds, and the host has /srv/x/sub/f.
//   Suggested fix: ask for recursive read-only where the engine has it
//   (API >= 1.44: BindOptions.ReadOnlyForceRecursive, failing closed if the
//   kernel cannot), else send BindOptions.NonRecursive for read-only binds
//   (what podman does), or refuse a --read grant with a mount below it
//   (from /proc/self/mountinfo) on an older engine, naming it.
//
// Bounded: one short docker run (90 s guard); the tmpfs (1 MiB) is
// unmounted and the directory removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { needEngineAsRoot } from './lib/adv23.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const cleanups = [];
after(() => { for (const c of cleanups.splice(0).reverse()) c(); });

test('docker cell: a mount below a --read grant is read-only too', { timeout: 120_000 }, async (t) => {
  if (!(await needEngineAsRoot(t))) return;
  const root = mkdtempSync('/var/tmp/e2e-adv23-rosub-');
  chmodSync(root, 0o755);
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const sub = path.join(root, 'sub');
  mkdirSync(sub);
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=1777', 'adv23-rosub', sub], { encoding: 'utf8' });
  assert.equal(m.status, 0, `mount tmpfs: ${m.stderr}`);
  cleanups.push(() => spawnSync('umount', ['-l', sub]));
  const planted = path.join(sub, 'planted');
  const r = spawnSync(MCPCELL_BIN, ['run', '--isolate=docker', '--relay=off', '--read', root, '--', '/bin/sh', '-c',
    `echo x > ${planted} 2>/dev/null; echo done`], { encoding: 'utf8', input: '', timeout: 90_000 });
  assert.match(r.stdout, /done/, `the docker cell did not run (exit ${r.status}); stderr: ${r.stderr}`);
  assert.equal(existsSync(planted), false, `the cell wrote ${planted} below its read-only grant ${root}`);
});
