// Adversary pass adv20: util/remove_tree.cc RemoveTree as rewritten by the
// adv19 fixes (c6cafe4: "flattens": empties the top, moves the
// subdirectories of each top-level directory up to the top with
// renameat2(RENAME_NOREPLACE), chmods only what it opens).
//
// Findings:
//   1. LOW-MEDIUM (regression of adv19's "held": "a 0000/0300 directory is
//      chmod 0700 first and removed") A non-empty directory without the
//      owner's write bit (0500, 0555, 0000, ...) two or more levels below the
//      top is never removed when mcpcell runs as a normal user, by this
//      sweep or any later one. Only a top-level entry is opened (OpenDirAt:
//      chmod 0700); a deeper directory must first be moved up (MoveUp), and
//      rename(2) of a directory to another parent needs write permission on
//      the directory itself (its ".." changes: vfs_rename's
//      inode_permission(source, MAY_WRITE)), so renameat2 fails EACCES,
//      MoveUp returns false, nothing progresses, and RemoveTree gives up
//      (returns false) with the directory and everything under it left.
//      (Root is not affected: CAP_DAC_OVERRIDE; so the unit test
//      RemoveTree.RemovesDirectoriesWhoseModeKeepsTheOwnerOut, h 0300 /
//      inner 0500 with a file, passes as root and should fail as a normal
//      user: worth running unit tests unprivileged too.) Who makes one: any package's
//      install script in its cell (`chmod 0500 lib` in its own package
//      directory, or a tarball whose directories are read-only), so:
//      every failed install leaves its .install-PID-X behind for good
//      (InstallIntoCache's RemoveTree(tmpl)), `mcpcell gc` reports it
//      "checked, 0 removed" forever, `mcpcell cache prune` of such a package
//      fails and leaves the renamed-aside .install-PID-pruned-* copy, and the
//      npmrc-snapshot / script-bin / docker run dirs share the code path.
//      Disk and data left behind (a package's files, whatever its scripts
//      wrote), not an escape.
//      Reproduce (as a non-root user): mkdir -p
//      ~/.cache/mcpcell/npx/.install-<dead pid>-x/node_modules/pkg/ro/inner;
//      echo x > .../pkg/ro/f; chmod 0500 .../pkg/ro; mcpcell gc (twice):
//      ".install-<pid>-x/.rm-0/ro/{f,inner}" remain, "1 checked, 0 removed".
//      Suggested fix: in MoveUp, when renameat2 fails EACCES/EPERM, give the
//      directory its owner's bits through an O_PATH fd (OwnerBitsBack(from,
//      name), as OpenDirAt does) and retry once; or open each inner
//      directory with OpenDirAt (which chmods 0700) before moving it.
// Held (read or tried, not kept as tests): symlinks swapped in for entries
// are never followed (O_NOFOLLOW opens; the O_PATH|O_DIRECTORY|O_NOFOLLOW
// chmod fd fails ENOTDIR on a link); nothing is reached through ".."; a
// tree with pre-made .rm-N names costs at most one failed MoveUp (the serial
// keeps counting); the loop ends when a pass removes or moves nothing (a
// racer that keeps creating entries keeps it going only while it runs, and
// a live owner's install is no longer swept, so no cell runs under it).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { MCPCELL_BIN } from './lib/paths.mjs';

const TEST_UID = 1001; // mcpcell-test
const TEST_GID = 1001;
const homes = [];
after(() => { for (const h of homes) spawnSync('rm', ['-rf', '--', h]); });

test('adv20: `mcpcell gc` removes an abandoned install holding a read-only directory two levels down', {
  timeout: 60_000,
}, (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = mkdtempSync('/var/tmp/e2e-adv20-rt-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const asUser = { uid: TEST_UID, gid: TEST_GID };
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.state'), LANG: 'C.UTF-8' };
  // A dead owner: what a failed install (or a killed launch) leaves.
  const deadPid = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
  const top = path.join(home, '.cache', 'mcpcell', 'npx', `.install-${deadPid}-adv20ro`);
  const ro = path.join(top, 'node_modules', 'pkg', 'lib');
  // What the package's install script does in its own package directory.
  const made = spawnSync('sh', ['-c', `mkdir -p '${ro}/inner' && echo data > '${ro}/f' && chmod 0500 '${ro}'`], asUser);
  assert.equal(made.status, 0, 'test setup');
  let out = '';
  for (let i = 0; i < 2; i++) {
    const gc = spawnSync(MCPCELL_BIN, ['gc'], { ...asUser, env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(gc.error, undefined, 'mcpcell gc ended');
    out = (gc.stdout + gc.stderr).split('\n').filter((l) => l.includes('npx')).join('\n');
  }
  t.diagnostic(out);
  const left = spawnSync('find', [top], { encoding: 'utf8' }).stdout;
  assert.ok(!existsSync(top), `two \`mcpcell gc\` runs left the abandoned install behind:\n${left}`);
});

test('adv20: `mcpcell gc` removes an abandoned install with a 0500 directory on top (held)', {
  timeout: 60_000,
}, (t) => {
  if (process.getuid() !== 0) { t.skip('needs root to act as mcpcell-test'); return; }
  const home = mkdtempSync('/var/tmp/e2e-adv20-rt-');
  homes.push(home);
  chmodSync(home, 0o755);
  chownSync(home, TEST_UID, TEST_GID);
  const asUser = { uid: TEST_UID, gid: TEST_GID };
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.state'), LANG: 'C.UTF-8' };
  const deadPid = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
  const top = path.join(home, '.cache', 'mcpcell', 'npx', `.install-${deadPid}-adv20top`);
  const sub = path.join(top, 'node_modules');
  const made = spawnSync('sh', ['-c', `mkdir -p '${sub}' && echo data > '${sub}/f' && chmod 0500 '${sub}'`], asUser);
  assert.equal(made.status, 0, 'test setup');
  const gc = spawnSync(MCPCELL_BIN, ['gc'], { ...asUser, env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(gc.error, undefined, 'mcpcell gc ended');
  assert.ok(!existsSync(top), 'a 0500 directory at the top level is chmod 0700 and removed');
});
