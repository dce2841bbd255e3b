// Acting as the unprivileged account mcpcell-test (uid 1001) from a root
// test run: as root the cell's uid is not the state directory's owner, so
// its mode 0700 hides it whatever the masks do; a normal user's cell runs
// as that user, and only the masks keep it out.

import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync } from 'node:fs';

import { MCPCELL_BIN } from './paths.mjs';

export const TEST_UID = 1001;
export const TEST_GID = 1001;
export const asTestUser = { uid: TEST_UID, gid: TEST_GID };

const homes = [];

/** Removes every home made by testUserHome. */
export function removeTestUserHomes() {
  for (const h of homes.splice(0)) spawnSync('rm', ['-rf', '--', h]);
}

/** Whether this run can act as mcpcell-test (root, and the account exists). */
export function canActAsTestUser() {
  return process.getuid() === 0 && spawnSync('id', ['-u', 'mcpcell-test']).status === 0;
}

/** A fresh home owned by mcpcell-test, with `dirs` (relative) made in it as that user. */
export function testUserHome(label, dirs = []) {
  const home = mkdtempSync(`/var/tmp/e2e-${label}-`);
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  for (const d of dirs) spawnSync('mkdir', ['-p', '--', `${home}/${d}`], asTestUser);
  return home;
}

/** The bare environment of a launch by mcpcell-test with HOME `home`, plus `extra`. */
export function testUserEnv(home, extra = {}) {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', ...extra };
}

/**
 * `mcpcell ARGS` as mcpcell-test, its stdin held open (a server whose stdin
 * ends is stopped) until it exits or `guardMs` passes: { done } resolving to
 * { code, stdout, stderr }; stdout() is what it printed so far.
 */
export function startAsTestUser(args, env, guardMs) {
  const child = spawn(MCPCELL_BIN, args, { ...asTestUser, env, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
  child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
  const done = new Promise((resolve) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), guardMs);
    child.on('close', (code) => { clearTimeout(guard); resolve({ code, stdout, stderr }); });
  });
  return { done, stdout: () => stdout };
}

/** `mcpcell ARGS` as mcpcell-test to its end: { code, stdout, stderr }. */
export function runAsTestUser(args, env, timeout = 60_000) {
  const r = spawnSync(MCPCELL_BIN, args, { ...asTestUser, env, cwd: '/', encoding: 'utf8', timeout, input: '' });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
