// Adversary pass adv23: a docker-group user (not root) picks the container
// cell's host uid with --uid/--gid, and so reads and writes as root.
//
// Finding (HIGH for a host that lets users run mcpcell through the docker
// group believing the cell is bounded by the caller's rights; the brief's
// question "can a normal user in the docker group use mcpcell to read or
// write files they could not otherwise": yes, any): `--uid 0 --gid 0` is
// passed to the engine as the container's `User` unchecked
// (src/cell/spec_builder.cc:601-604 takes req.uid/req.gid; src/cell/docker/
// create_body.cc:234 sends them; docker_cell.cc:227 claims a cell id only
// when no ids were given). The engine (root) runs the server as host uid 0:
// CapDrop ALL takes CAP_DAC_OVERRIDE away, but the owner's bits are root's,
// so every root-owned file with an owner bit is open to it — /etc/shadow
// (with --force-credentials), /root's 0600 files, and `--write /etc/cron.d`
// (not a credential location) plants a root cron job: root code execution.
// Likewise `--uid <alice>` reads alice's 0600 files, `--gid 42` (shadow)
// /etc/shadow. A native cell cannot do this: the caller's own access rights
// decide (docs/ARCHITECTURE.md "the caller's own access rights decide").
//   Reproduce (as a docker-group user):
//     mcpcell run --isolate=docker --uid 0 --gid 0 --write /etc/cron.d -- \
//       sh -c 'echo "* * * * * root id >/tmp/pwned" >/etc/cron.d/x'
//   Suggested fix: when the caller is not root (geteuid() != 0), refuse
//   --uid/--gid for container cells unless they are the caller's own uid and
//   a gid the caller holds (getgroups), with exit 122 naming why; the
//   claimed cell id stays the default. (Docker-group membership is
//   root-equivalent through `docker run -v /:/h`, but mcpcell must not be the
//   tool that hands it out, e.g. to a wrapper or a policy that lets a
//   user pick mcpcell flags but not raw docker.)
//
// Bounded: two short runs (60 s guard each); the files are in a fresh
// directory removed after.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { dockerUserUid, mcpcellAsDockerUser, needEngineAsRoot } from './lib/adv23.mjs';

const dirs = [];
after(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

/** A fresh root-owned directory of mode `mode` in /var/tmp. */
function rootDir(mode) {
  const d = mkdtempSync('/var/tmp/e2e-adv23-uid-');
  chmodSync(d, mode);
  dirs.push(d);
  return d;
}

test('docker cell run by a docker-group user: --uid 0 does not read a root-only file', { timeout: 90_000 }, async (t) => {
  if (!(await needEngineAsRoot(t))) return;
  dockerUserUid();
  const dir = rootDir(0o755);
  const value = `root-only-${randomBytes(6).toString('hex')}`;
  const file = path.join(dir, 'secret');
  writeFileSync(file, value, { mode: 0o600 });
  const r = mcpcellAsDockerUser(['run', '--isolate=docker', '--uid', '0', '--gid', '0', '--read', dir, '--',
    '/bin/cat', file]);
  assert.doesNotMatch(r.stdout, new RegExp(value),
    `the docker-group user read a root-only (0600) file through mcpcell --uid 0 (exit ${r.code}); stderr: ${r.stderr}`);
  assert.notEqual(r.code, 0, 'a --uid the caller does not hold must be refused');
});

test('docker cell run by a docker-group user: --uid 0 --write does not create root-owned files', { timeout: 90_000 }, async (t) => {
  if (!(await needEngineAsRoot(t))) return;
  dockerUserUid();
  // A root-owned 0755 directory, as /etc/cron.d or /etc/sudoers.d are.
  const dir = rootDir(0o755);
  const planted = path.join(dir, 'planted');
  const r = mcpcellAsDockerUser(['run', '--isolate=docker', '--uid', '0', '--gid', '0', '--write', dir, '--',
    '/bin/sh', '-c', `echo '* * * * * root id' > ${planted}`]);
  const made = existsSync(planted) ? statSync(planted) : null;
  assert.equal(made, null,
    `the docker-group user wrote ${planted} (owner uid ${made?.uid}) in a root-only directory through --uid 0 ` +
    `(exit ${r.code}); stderr: ${r.stderr}`);
  assert.notEqual(r.code, 0, 'a --uid the caller does not hold must be refused');
});
