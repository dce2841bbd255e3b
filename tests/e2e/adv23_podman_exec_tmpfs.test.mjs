// Adversary pass adv23: a podman cell can write a program and run it; native
// and docker cells cannot (every place they may write is noexec).
//
// Finding (LOW-MEDIUM, a hardening a native and a docker cell have and a
// podman cell silently lacks): mcpcell states "tmpfs /tmp noexec: nothing
// downloaded there can be run directly" (src/cell/docker/README.md), and in
// native and docker cells every writable place (/tmp, the home, /dev/shm) is
// noexec. TmpfsOptions (src/cell/docker/create_body.cc:67-86) puts noexec
// only on /tmp and relies on Docker adding it to the others; Podman does
// not: the home tmpfs is mounted "rw,nosuid,nodev" (exec allowed), and with
// ReadonlyRootfs Podman adds writable tmpfs of its own on /var/tmp and /run
// (containers.conf read_only_tmpfs), also exec-able. A server (or what it
// fetched, a second-stage payload) copies a binary to /home/mcp, /var/tmp or
// /run and runs it: `cp /bin/true /var/tmp/x && /var/tmp/x` works in a
// podman cell, "Permission denied" in docker and native cells.
//   Suggested fix: put noexec in every tmpfs option string (TmpfsOptions,
//   all engines: the home too), and for Podman either turn its own tmpfs off
//   (the libpod API's read_write_tmpfs=false / containers.conf
//   read_only_tmpfs=false) or name /var/tmp and /run in HostConfig.Tmpfs
//   ("ro" or "noexec,nosuid,nodev,size=...") so they are mcpcell's.
//
// Bounded: one short podman run (90 s guard).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { PODMAN_SOCKET, needEngineAsRoot } from './lib/adv23.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const PLACES = ['/tmp', '/var/tmp', '/run', '/home/mcp', '/dev/shm'];

test('podman cell: nothing the cell can write can be executed (as in docker and native cells)', { timeout: 120_000 }, async (t) => {
  if (!(await needEngineAsRoot(t, PODMAN_SOCKET))) return;
  const script = PLACES.map((d) => `cp /bin/true ${d}/adv23-x 2>/dev/null && ${d}/adv23-x 2>/dev/null && echo "ran from ${d}"`)
    .join('; ') + '; echo done';
  const r = spawnSync(MCPCELL_BIN, ['run', '--isolate=podman', '--relay=off', '--', '/bin/sh', '-c', script],
    { encoding: 'utf8', input: '', timeout: 90_000 });
  assert.match(r.stdout, /done/, `the podman cell did not run (exit ${r.status}); stderr: ${r.stderr}`);
  const ran = r.stdout.split('\n').filter((l) => l.startsWith('ran from '));
  assert.deepEqual(ran, [], 'the podman cell ran a program it had written');
});
