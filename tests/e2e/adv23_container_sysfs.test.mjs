// Adversary pass adv23: a docker (runc) cell sees the host's sysfs, which a
// native cell does not have at all.
//
// Finding (LOW, information for a kernel exploit rather than a way out): the
// create body (src/cell/docker/create_body.cc:177-214, HostConfig) leaves
// the engine's default /sys, the host's sysfs mounted read-only. A server in
// a docker cell reads /sys/kernel/btf/vmlinux (the running kernel's full
// type information, what CO-RE exploits and struct-offset guessing need),
// /sys/devices/system/cpu/vulnerabilities/* (which CPU mitigations are off),
// /sys/module (78 loaded modules here), /sys/kernel/slab, block devices and
// PCI ids. A native cell mounts no /sys (ls /sys: No such file or
// directory), and the threat model treats the cell's view of the host as
// something to keep narrow. Podman cells show it the same way; gVisor shows
// its own synthetic sysfs.
//   Reproduce: mcpcell run --isolate=docker -- sh -c
//     'cat /sys/devices/system/cpu/vulnerabilities/spectre_v2; ls /sys/module'
//   Suggested fix: in HostConfig, an empty read-only tmpfs over /sys
//   (`Tmpfs: {"/sys": "ro,nosuid,nodev,noexec,size=4k"}` works with the
//   engine here: runc then mounts only the cgroup tree below it, which the
//   private cgroup namespace limits to the cell's own), or list /sys in
//   `MaskedPaths`; the same for Podman.
//
// Bounded: one short run per engine (60 s guard each).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { PODMAN_SOCKET, SOCKET, needEngineAsRoot } from './lib/adv23.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const PROBES = ['/sys/kernel/btf/vmlinux', '/sys/devices/system/cpu/vulnerabilities/spectre_v2', '/sys/module/kernel'];

for (const [level, socket] of [['docker', SOCKET], ['podman', PODMAN_SOCKET]]) {
  test(`${level} cell: the host's sysfs is not shown (a native cell has none)`, { timeout: 90_000 }, async (t) => {
    if (!(await needEngineAsRoot(t, socket))) return;
    const script = PROBES.map((p) => `test -e ${p} && echo "shown ${p}"`).join('; ') + '; echo done';
    const r = spawnSync(MCPCELL_BIN, ['run', `--isolate=${level}`, '--relay=off', '--', '/bin/sh', '-c', script],
      { encoding: 'utf8', input: '', timeout: 60_000 });
    assert.match(r.stdout, /done/, `the cell did not run (exit ${r.status}); stderr: ${r.stderr}`);
    const shown = r.stdout.split('\n').filter((l) => l.startsWith('shown '));
    assert.deepEqual(shown, [], `the ${level} cell reads the host's sysfs`);
  });
}
