// Adversary pass adv23: a run that cannot see another user's mcpcell takes
// it for dead and force-removes that user's running container cell.
//
// Finding (MEDIUM, availability, on hosts that hide processes: /proc mounted
// hidepid=2 / hidepid=invisible, a common hardening, or mcpcell started by a
// systemd unit with ProtectProc=invisible): every container run and `mcpcell
// gc` reaps containers "whose supervisor label names a dead process"
// (src/cell/docker/reaper.cc:51 ReapOrphans). Dead is decided by reading
// /proc/PID/stat (reaper.cc:30-35 SupervisorAlive: `if (start.empty()) return
// false;`), so a supervisor the caller may not see is dead to it. One
// ordinary `mcpcell run --isolate=docker` by any docker-group user then
// SIGKILLs and removes every other user's running container cell (root's
// included) on the engine, and their MCP sessions end mid-call. No
// ownership check: the labels do not say whose supervisor it is.
//   Reproduce: mount -o remount,hidepid=2 /proc; as root start a docker
//   cell; as a docker-group user `mcpcell run --isolate=docker -- true`: it
//   says "removed 1 container(s) left by a dead mcpcell" and root's cell
//   is gone.
//   This test hides only its own root supervisor's /proc entry from the
//   docker-group user's run (a bind mount over /proc/PID in a private mount
//   namespace, what hidepid does for every other user's pid), so that the
//   other cells on a shared engine are not reaped by the test itself.
//   Suggested fix: never treat "cannot read /proc/PID/stat" as dead: when
//   it fails, `kill(pid, 0)` failing with EPERM (or any error but ESRCH)
//   means alive; and label each container with the supervisor's uid
//   (io.mcpcell.supervisor-uid) and reap only one's own, root excepted.
//
// Bounded: one long-lived root cell (killed and removed after), one short
// run as the docker-group user (60 s guard).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { DOCKER_USER, SOCKET, dockerUserUid, needEngineAsRoot } from './lib/adv23.mjs';
import { engineRequest } from './lib/engine.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

const cleanups = [];
after(async () => { for (const c of cleanups.splice(0).reverse()) await c(); });

async function containersOf(pid) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`io.mcpcell.supervisor=${pid}`] }));
  const r = await engineRequest(SOCKET, 'GET', `/containers/json?all=1&filters=${filters}`);
  return r.status === 200 ? r.body : [];
}

/** A root docker cell that stays up until its stdin closes: { child, pid, out() }. */
async function startRootCell() {
  const child = spawn(MCPCELL_BIN, ['run', '--isolate=docker', '--relay=off', '--', '/bin/sh', '-c',
    'echo up; exec cat >/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const c of await containersOf(child.pid)) await engineRequest(SOCKET, 'DELETE', `/containers/${c.Id}?force=1`);
  });
  for (let i = 0; i < 200 && !out.includes('up') && child.exitCode === null; ++i) await sleep(100);
  assert.match(out, /up/, `the root cell did not start; stderr: ${err}`);
  return child;
}

test('a docker-group user\'s run does not remove root\'s running container cell it cannot see', { timeout: 120_000 }, async (t) => {
  if (!(await needEngineAsRoot(t))) return;
  dockerUserUid();
  const victim = await startRootCell();
  assert.equal((await containersOf(victim.pid)).length, 1, 'control: root\'s cell has its container');
  const empty = mkdtempSync('/var/tmp/e2e-adv23-hide-');
  cleanups.push(() => rmdirSync(empty));
  const home = spawnSync('getent', ['passwd', DOCKER_USER], { encoding: 'utf8' }).stdout.split(':')[5];
  const script = `mount --bind ${empty} /proc/${victim.pid} && exec runuser -u ${DOCKER_USER} -- env -i ` +
    `PATH=/usr/bin:/bin HOME=${home} ${MCPCELL_BIN} run --isolate=docker -- /bin/true`;
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script],
    { encoding: 'utf8', input: '', timeout: 60_000, cwd: '/' });
  assert.equal(r.status, 0, `the docker-group user's run failed: ${r.stderr}`);
  await sleep(500);
  const left = await containersOf(victim.pid);
  assert.equal(left.length, 1,
    `root's running cell (supervisor ${victim.pid}, alive: ${victim.exitCode === null}) lost its container to ` +
    `another user's run; that run said: ${r.stderr.trim()}`);
  assert.equal(victim.exitCode, null, 'root\'s cell ended');
});
