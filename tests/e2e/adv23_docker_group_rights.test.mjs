// Adversary pass adv23: a container cell of a docker-group user reads and
// writes as another identity (its claimed host uid), so files the caller is
// denied through its own or its group's bits are open to the cell through
// the "other" bits.
//
// Finding (LOW: takes a deny-by-owner/group mode or a POSIX ACL deny entry,
// e.g. `setfacl -m u:bob:--- /srv/report`, `chmod 0604` with the group of the
// users to keep out; docker-group membership is root-equivalent anyway, but
// the brief asks whether mcpcell hands out more than the caller has, and a
// native cell does not): a non-root caller's container cell runs as a fresh
// host uid from cell_ids.h (src/cell/docker/docker_cell.cc:227), and the
// engine (root) bind-mounts the grant. Permission inside is then decided for
// that uid, which is in neither the owner nor the group, so "other" bits
// apply where the caller's owner/group bits (or ACL entry) deny it. The grant
// checks run as the caller but only stat/list: a file is never checked with
// access(2) (src/cell/spec_builder.cc AddUserBind; the scan masks a directory
// it cannot list, not a file it cannot read).
//   Reproduce (as docker-group user bob, file root:bob 0604 that bob cannot
//   read): mcpcell run --isolate=docker --read /srv/f -- cat /srv/f
//   prints it; `cat /srv/f` as bob says Permission denied. The same with a
//   root:bob 0703 directory and --write: bob cannot create files there, the
//   cell can.
//   Suggested fix: for a caller that is not root, check every grant as the
//   caller (faccessat(..., R_OK / W_OK|X_OK, AT_EACCESS) on the grant and on
//   each entry the credential walk visits; mask — /dev/null or an empty
//   tmpfs — what the caller cannot read, refuse a --write the caller cannot
//   write), as the walk already masks directories it cannot list.
//
// Bounded: two short runs (60 s guard each), files in a fresh directory
// removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { DOCKER_USER, dockerUserUid, mcpcellAsDockerUser, needEngineAsRoot } from './lib/adv23.mjs';

const dirs = [];
after(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function freshDir() {
  const d = mkdtempSync('/var/tmp/e2e-adv23-rights-');
  chmodSync(d, 0o755);
  dirs.push(d);
  return d;
}

/** `cmd args` as the docker-group user: its exit status. */
const asUser = (cmd, args) => spawnSync('runuser', ['-u', DOCKER_USER, '--', cmd, ...args], { encoding: 'utf8' }).status;

test('docker cell of a docker-group user: a file its group bits deny the caller stays unreadable', { timeout: 90_000 }, async (t) => {
  if (!(await needEngineAsRoot(t))) return;
  const uid = dockerUserUid();
  const dir = freshDir();
  const value = `group-denied-${randomBytes(6).toString('hex')}`;
  const file = path.join(dir, 'report');
  writeFileSync(file, value);
  chownSync(file, 0, uid);  // the caller's own group (gid = uid, useradd's default)
  chmodSync(file, 0o604);
  assert.notEqual(asUser('cat', [file]), 0, 'control: the caller itself cannot read the file');
  const r = mcpcellAsDockerUser(['run', '--isolate=docker', '--read', file, '--', '/bin/cat', file]);
  assert.doesNotMatch(r.stdout, new RegExp(value),
    `the cell read a file its caller may not read (exit ${r.code}); stderr: ${r.stderr}`);
});

test('docker cell of a docker-group user: a directory its group bits deny the caller stays unwritable', { timeout: 90_000 }, async (t) => {
  if (!(await needEngineAsRoot(t))) return;
  const uid = dockerUserUid();
  const dir = path.join(freshDir(), 'drop');
  mkdirSync(dir);
  chownSync(dir, 0, uid);
  chmodSync(dir, 0o753);  // group r-x (the caller), other -wx (anyone else)
  const planted = path.join(dir, 'planted');
  assert.notEqual(asUser('touch', [planted]), 0, 'control: the caller itself cannot create files there');
  const r = mcpcellAsDockerUser(['run', '--isolate=docker', '--write', dir, '--', '/bin/sh', '-c', `: > ${planted}`]);
  assert.equal(existsSync(planted), false,
    `the cell created a file where its caller may not (exit ${r.code}); stderr: ${r.stderr}`);
});
